"""Matplotlib figures as SVG markup that can be pasted into an HTML page.

Text stays text (`svg.fonttype = "none"`), which keeps charts small and searchable; the XML
prolog, DOCTYPE (which names a remote DTD), RDF metadata and namespace declarations are dropped
because inline SVG in HTML needs none of them and the report must not mention any remote resource.
"""

from __future__ import annotations

import io
import re
import warnings
from collections.abc import Callable

import matplotlib
from matplotlib.figure import Figure

_STYLE = {
    "svg.fonttype": "none",
    "font.family": "sans-serif",
    "font.sans-serif": ["DejaVu Sans", "Arial"],
    "font.size": 9,
    # Labels are data (task ids may contain "$"); never parse them as mathtext.
    "text.parse_math": False,
    "axes.spines.top": False,
    "axes.spines.right": False,
}
_METADATA_NONE = {"Date": None, "Creator": None, "Format": None, "Type": None}
_METADATA = re.compile(r"\s*<metadata>.*?</metadata>", re.S)
_NAMESPACES = re.compile(r'\s+xmlns(:\w+)?="[^"]*"')
_SAFE_NAME = re.compile(r"^[A-Za-z][\w-]*$")
_ID_REFERENCE = re.compile(r'(\bid="|url\(#|href="#)')
_TAG = re.compile(r"<[^>]+>")


def svg_figure(draw: Callable[[Figure], None], *, figsize: tuple[float, float], name: str) -> str:
    """Draw a figure with the report's style and return its inline SVG markup.

    Figures are built with the object API (no pyplot), so no GUI backend or global figure state
    is involved and report building is safe in any process.

    Args:
        draw: Fills the empty figure it is given (add axes, plot).
        figsize: Width and height in inches.
        name: A distinct name per chart in a page (letters, digits, `-`, `_`). It salts the SVG's
            internal ids and prefixes every id with `<name>-` (gids too: `gid="x"` becomes
            `id="<name>-x"`), so the ids of two charts in one page never collide; with the salt the
            output is deterministic.

    Returns:
        An `<svg>` element string.
    """
    if not _SAFE_NAME.match(name):
        raise ValueError(f"chart name must be letters, digits, '-' or '_', got {name!r}")
    with matplotlib.rc_context({**_STYLE, "svg.hashsalt": name}):
        figure = Figure(figsize=figsize)
        draw(figure)
        buffer = io.StringIO()
        with warnings.catch_warnings():
            # Text stays text, drawn by the browser with its own fonts: a glyph missing from
            # matplotlib's font (emoji in a task id) only affects layout, not the output.
            warnings.filterwarnings("ignore", message="Glyph .* missing from font")
            figure.savefig(buffer, format="svg", bbox_inches="tight", metadata=_METADATA_NONE)
    markup = buffer.getvalue()
    markup = markup[markup.index("<svg") :]
    markup = _METADATA.sub("", markup)
    markup = _NAMESPACES.sub("", markup)
    # Only inside tags: text content (task ids, labels) is left exactly as written.
    markup = _TAG.sub(lambda tag: _ID_REFERENCE.sub(lambda m: f"{m.group(1)}{name}-", tag.group(0)), markup)
    return markup.replace("<svg", f'<svg class="chart" data-chart="{name}"', 1)
