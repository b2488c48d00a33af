"""The report's two charts: per-seed estimates against the pooled CI, and the task x seed heatmap."""

from __future__ import annotations

import html
import re

from matplotlib import colormaps
from matplotlib.cm import ScalarMappable
from matplotlib.colors import Normalize
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch, Rectangle
from matplotlib.ticker import PercentFormatter

from forge_eval.reports._svg import svg_figure
from forge_eval.reports._trials import Cell, TaskOutcomes
from forge_eval.rundir import MetricResult

SEEDS_CHART = "seeds"
HEATMAP_CHART = "heatmap"
HEATMAP_CMAP = "viridis"
_ERROR_COLOR = "#d62728"
_NOT_RUN_COLOR = "#e6e6e6"
_MAX_LABEL = 48
_CELL_W, _CELL_H = 0.7, 0.24  # inches
# Up to this many cells the heatmap also prints "passed/trials" in each cell.
_MAX_ANNOTATED_CELLS = 400


def seeds_chart(metrics: tuple[MetricResult, ...], seeds: tuple[int, ...]) -> str:
    """A forest plot: one row per metric with its CI band, the estimate, and a point per seed.

    Per-seed points carry the gid `seed-<metric index>-<seed>` (see `svg_figure` for the prefix).
    """
    palette = colormaps["tab10"]
    colors = {seed: palette(i % 10) for i, seed in enumerate(seeds)}
    n = len(metrics)
    levels = {m.confidence_level for m in metrics}
    ci_label = f"{100 * levels.pop():g}% CI" if len(levels) == 1 else "CI"

    def draw(figure: Figure) -> None:
        ax = figure.add_subplot()
        for row, metric in enumerate(metrics):
            y = n - 1 - row
            if metric.ci_low is not None and metric.ci_high is not None:
                ax.add_patch(
                    Rectangle(
                        (metric.ci_low, y - 0.3),
                        metric.ci_high - metric.ci_low,
                        0.6,
                        facecolor="#9ecae1",
                        edgecolor="none",
                        alpha=0.7,
                    )
                )
            if metric.estimate is not None:
                ax.plot([metric.estimate] * 2, [y - 0.35, y + 0.35], color="black", linewidth=2)
            spread = [s for s in metric.per_seed if s.estimate is not None]
            for k, point in enumerate(spread):
                offset = (k - (len(spread) - 1) / 2) * min(0.12, 0.5 / max(len(spread), 1))
                ax.plot(
                    point.estimate,
                    y + offset,
                    "o",
                    markersize=5,
                    color=colors.get(point.seed, "grey"),
                    markeredgecolor="white",
                    markeredgewidth=0.5,
                    gid=f"seed-{row}-{point.seed}",
                )
        ax.set_yticks(range(n), [m.name for m in reversed(metrics)])
        ax.set_ylim(-0.6, n - 0.4)
        # A little room past 0% and 100% so points there are not cut in half by the axes.
        ax.set_xlim(-0.02, 1.02)
        ax.xaxis.set_major_formatter(PercentFormatter(1.0, decimals=0))
        ax.grid(axis="x", color="#dddddd", linewidth=0.6)
        ax.set_axisbelow(True)
        handles = [
            Patch(facecolor="#9ecae1", alpha=0.7, label=ci_label),
            Line2D([], [], color="black", linewidth=2, label="estimate"),
        ] + [Line2D([], [], marker="o", linestyle="", color=colors[s], label=f"seed {s}") for s in seeds]
        ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)

    return svg_figure(draw, figsize=(7.0, 0.9 + 0.45 * max(n, 1)), name=SEEDS_CHART)


def _cell_label(task_id: str, seed: int, cell: Cell | None) -> str:
    if cell is None:
        return f"{task_id}, seed {seed}: no trial recorded"
    text = f"{task_id}, seed {seed}: {cell.n_passed}/{cell.n_trials} passed"
    return text + (f", {cell.n_errored} errored" if cell.n_errored else "")


def outcome_heatmap(outcomes: TaskOutcomes) -> str:
    """Tasks x seeds, colour = fraction of the cell's trials that passed.

    Cells with an errored trial are hatched and outlined in red; cells without trials are grey.
    Each cell is a group with gid `cell-<task index>-<seed index>` and a `<title>` tooltip.
    """
    tasks, seeds = outcomes.tasks, outcomes.seeds
    cmap = colormaps[HEATMAP_CMAP]
    norm = Normalize(0.0, 1.0)
    annotate = len(tasks) * len(seeds) <= _MAX_ANNOTATED_CELLS

    # Laid out in inches so cells keep one size whatever the task count, and the colour bar and
    # legend stay next to the top rows instead of stretching along a tall grid. Tick labels fall
    # outside the figure; the tight bounding box at save time takes them in.
    grid_w, grid_h = _CELL_W * len(seeds), _CELL_H * len(tasks)
    width, height = grid_w + 1.6, grid_h
    bar_h = max(min(grid_h, 1.8), 1.2)

    def draw(figure: Figure) -> None:
        ax = figure.add_axes((0, 0, grid_w / width, 1))
        for i, task in enumerate(tasks):
            for j, cell in enumerate(task.cells):
                fraction = None if cell is None else cell.pass_fraction
                face = _NOT_RUN_COLOR if fraction is None else cmap(norm(fraction))
                errored = cell is not None and cell.n_errored > 0
                ax.add_patch(
                    Rectangle(
                        (j, i),
                        1,
                        1,
                        facecolor=face,
                        edgecolor=_ERROR_COLOR if errored else "white",
                        hatch="///" if errored else None,
                        linewidth=1.5 if errored else 1.0,
                        gid=f"cell-{i}-{j}",
                    )
                )
                if annotate and cell is not None:
                    dark = fraction is not None and fraction < 0.6
                    ax.text(
                        j + 0.5,
                        i + 0.5,
                        f"{cell.n_passed}/{cell.n_trials}",
                        ha="center",
                        va="center",
                        fontsize=7,
                        color="white" if dark else "black",
                    )
        ax.set_xlim(0, len(seeds))
        ax.set_ylim(len(tasks), 0)
        ax.xaxis.tick_top()
        ax.set_xticks([j + 0.5 for j in range(len(seeds))], [f"seed {s}" for s in seeds])
        ax.set_yticks([i + 0.5 for i in range(len(tasks))], [_short(t.task_id) for t in tasks])
        ax.tick_params(length=0)
        for spine in ax.spines.values():
            spine.set_visible(False)
        bar_axes = figure.add_axes(
            ((grid_w + 0.25) / width, 1 - bar_h / height, 0.15 / width, bar_h / height)
        )
        colorbar = figure.colorbar(ScalarMappable(norm, cmap), cax=bar_axes, format=PercentFormatter(1.0, 0))
        colorbar.set_label("epochs passed")
        figure.legend(
            handles=[
                Patch(facecolor="white", edgecolor=_ERROR_COLOR, hatch="///", label="errored trial(s)"),
                Patch(facecolor=_NOT_RUN_COLOR, label="no trial recorded"),
            ],
            loc="upper left",
            bbox_to_anchor=((grid_w + 0.1) / width, 1 - (bar_h + 0.15) / height),
            frameon=False,
        )

    markup = svg_figure(draw, figsize=(width, height), name=HEATMAP_CHART)
    return _add_tooltips(markup, outcomes)


def _short(task_id: str) -> str:
    return task_id if len(task_id) <= _MAX_LABEL else task_id[: _MAX_LABEL - 1] + "…"


def _add_tooltips(markup: str, outcomes: TaskOutcomes) -> str:
    """Give each cell group a `<title>`, the native SVG tooltip (matplotlib cannot emit one)."""
    pattern = re.compile(rf'<g id="{HEATMAP_CHART}-cell-(\d+)-(\d+)">')

    def titled(match: re.Match[str]) -> str:
        i, j = int(match.group(1)), int(match.group(2))
        task = outcomes.tasks[i]
        label = _cell_label(task.task_id, outcomes.seeds[j], task.cells[j])
        return f"{match.group(0)}<title>{html.escape(label)}</title>"

    return pattern.sub(titled, markup)
