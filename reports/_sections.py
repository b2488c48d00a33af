"""Report sections and the registry through which other packages add their own."""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from forge_eval._registry import Registry

ENTRY_POINT_GROUP = "forge_eval.report_sections"


@dataclass(frozen=True)
class Section:
    """A titled part of the report.

    Args:
        title: Plain text; the report escapes it.
        html: An HTML fragment, inserted as is: escape every piece of data in it
            (`html.escape`) and reference no remote resource (the report must open offline).
        anchor: The section's id for the table of contents; derived from the title if omitted.
    """

    title: str
    html: str
    anchor: str | None = None

    @property
    def id(self) -> str:
        return self.anchor or "section-" + (re.sub(r"[^a-z0-9]+", "-", self.title.lower()).strip("-") or "x")


SectionFn = Callable[[Path], Section | None]


class SectionRegistry(Registry[SectionFn]):
    """A `Registry` of section callables that also yields them in registration order.

    Entries registered in code come first; then, on first use, callables advertised by installed
    packages under the entry-point group `forge_eval.report_sections` (name = section name, value =
    `module:callable`), in entry-point name order. A plugin that fails to import does not stop the
    report: its slot renders the import error instead.
    """

    def __init__(self, kind: str = "report section", group: str = ENTRY_POINT_GROUP) -> None:
        super().__init__(kind, loader=self._load_entry_points)
        self.group = group

    def _load_entry_points(self) -> None:
        for point in sorted(entry_points(group=self.group), key=lambda p: p.name):
            if point.name in self._entries:
                continue
            try:
                function = point.load()
            except Exception as e:  # any import-time failure of third-party code
                function = _failed_import(point.value, e)
            self.register(point.name, function)

    def in_order(self) -> Iterator[tuple[str, SectionFn]]:
        """(name, callable) pairs in registration order."""
        self._ensure_loaded()
        yield from list(self._entries.items())


def _failed_import(target: str, error: Exception) -> SectionFn:
    def section(run_dir: Path) -> Section:
        raise RuntimeError(f"could not import {target}: {type(error).__name__}: {error}")

    return section


REPORT_SECTIONS = SectionRegistry()


def render_extra_sections(run_dir: Path, registry: SectionRegistry) -> list[Section]:
    """Call every registered section; a section that raises is shown as a warning, not a crash.

    A bug in an optional section must not cost the user the rest of the report.
    """
    sections = []
    for name, function in registry.in_order():
        try:
            result: Any = function(run_dir)
        except Exception as e:  # third-party section code; contained by design
            sections.append(
                Section(
                    title=name,
                    html=f'<p class="warning">The section <code>{html.escape(name)}</code> failed: '
                    f"{html.escape(type(e).__name__)}: {html.escape(str(e))}</p>",
                )
            )
            continue
        if result is None:
            continue
        if not isinstance(result, Section):
            message = f"returned {type(result).__name__}, not a Section"
            sections.append(Section(name, f'<p class="warning">{html.escape(name)} {message}</p>'))
            continue
        sections.append(result)
    return sections
