"""The comparison report (`forge-eval compare`) and the step-budget section of a run report.

Both draw from JSON written by `forge_eval.analysis` (compare.json, budgets.json), so a report can be
rebuilt without reading logs again.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from matplotlib.figure import Figure
from matplotlib.ticker import PercentFormatter

from forge_eval import __version__
from forge_eval.reports._format import esc, interval, percent, points
from forge_eval.reports._page import document
from forge_eval.reports._sections import REPORT_SECTIONS, Section
from forge_eval.reports._svg import svg_figure
from forge_eval.rundir import RunDir, write_text

_COLORS = ("#1f77b4", "#ff7f0e")
_METRIC_HEADER = ("metric", "baseline", "run", "difference", "95% CI", "noise floor", "paired cells")


def _pp_interval(low: float | None, high: float | None) -> str:
    return interval(low, high, points, "no interval (fewer than 2 paired tasks)")


def _with_interval(m: dict[str, Any]) -> str:
    return f"{percent(m['estimate'])} {interval(m['ci_low'], m['ci_high'])}"


def _points_interval(d: dict[str, Any]) -> str:
    """A behavior difference's interval, in points of its 0-100 scale."""
    return interval(d["ci_low"], d["ci_high"], lambda bound: f"{bound:.1f}")


def _table(header: tuple[str, ...], rows: list[tuple[str, ...]], sortable: bool = True) -> str:
    head = "".join(f"<th>{esc(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{esc(c)}</td>" for c in row) + "</tr>" for row in rows)
    css = ' class="sortable"' if sortable else ""
    return f"<table{css}><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _difference_chart(metrics: dict[str, dict[str, Any]], name: str) -> str:
    """A forest plot of the paired differences (percentage points) with their CIs."""
    names = [n for n, d in metrics.items() if d.get("estimate") is not None]

    def draw(figure: Figure) -> None:
        ax = figure.add_subplot()
        for row, metric in enumerate(reversed(names)):
            d = metrics[metric]
            if d["ci_low"] is not None:
                ax.plot([d["ci_low"], d["ci_high"]], [row, row], color="#6baed6", linewidth=5, alpha=0.8)
            ax.plot(d["estimate"], row, "o", color="black", markersize=5)
        ax.axvline(0, color="#888888", linewidth=0.8, linestyle="--")
        ax.set_yticks(range(len(names)), list(reversed(names)))
        ax.xaxis.set_major_formatter(PercentFormatter(1.0, decimals=0))
        ax.set_xlabel("run minus baseline (percentage points, 95% CI)")
        ax.grid(axis="x", color="#dddddd", linewidth=0.6)

    return svg_figure(draw, figsize=(7.0, 0.9 + 0.4 * max(len(names), 1)), name=name)


def _seed_chart(per_seed: list[dict[str, Any]], name: str) -> str:
    """Success rate per seed on the paired cells, baseline and run side by side."""

    def draw(figure: Figure) -> None:
        ax = figure.add_subplot()
        seeds = [p["seed"] for p in per_seed]
        for offset, (key, label) in zip((-0.1, 0.1), (("baseline", "baseline"), ("run", "run")), strict=True):
            ax.plot(
                [i + offset for i in range(len(seeds))],
                [p[key] for p in per_seed],
                "o",
                color=_COLORS[0 if key == "baseline" else 1],
                label=label,
            )
        ax.set_xticks(range(len(seeds)), [f"seed {s}" for s in seeds])
        ax.set_ylim(-0.03, 1.03)
        ax.yaxis.set_major_formatter(PercentFormatter(1.0, decimals=0))
        ax.set_ylabel("success rate (paired cells)")
        ax.legend(frameon=False, loc="upper left", bbox_to_anchor=(1.01, 1.0))

    return svg_figure(draw, figsize=(6.0, 2.6), name=name)


def budget_chart(curves: dict[str, list[dict[str, Any]]], name: str) -> str:
    """Success rate vs step budget with its 95% band, one line per run."""

    def draw(figure: Figure) -> None:
        ax = figure.add_subplot()
        for color, (label, curve) in zip(_COLORS * 4, curves.items(), strict=False):
            budgets = [p["budget"] for p in curve]
            ax.plot(budgets, [p["estimate"] for p in curve], "o-", color=color, label=label)
            low = [p["ci_low"] if p["ci_low"] is not None else p["estimate"] for p in curve]
            high = [p["ci_high"] if p["ci_high"] is not None else p["estimate"] for p in curve]
            ax.fill_between(budgets, low, high, color=color, alpha=0.18, linewidth=0)
        ax.set_xlabel("step budget (model turns)")
        ax.set_ylabel("success rate")
        ax.set_ylim(-0.03, 1.03)
        ax.yaxis.set_major_formatter(PercentFormatter(1.0, decimals=0))
        ax.grid(color="#eeeeee", linewidth=0.6)
        ax.legend(frameon=False, loc="upper left", bbox_to_anchor=(1.01, 1.0))

    return svg_figure(draw, figsize=(6.5, 2.8), name=name)


def _pair_sections(index: int, pair: dict[str, Any]) -> list[Section]:
    slug = f"pair{index}"
    label = f"{pair['run']} vs {pair['baseline']}"
    matching = pair["matching"]
    note = (
        "<p>Same tasks, seeds and epochs: every cell is paired.</p>"
        if matching["matched"]
        else '<div class="banner" role="note"><strong>Not a full pairing.</strong><ul>'
        + "".join(f"<li>{esc(n)}</li>" for n in matching["notes"])
        + "</ul></div>"
    )
    protocol = pair.get("protocol_differences") or []
    if protocol:
        note = (
            '<div class="warning" id="' + slug + '-protocol" role="note"><strong>⚠ The runs\' protocols '
            "differ</strong>, so a difference may come from the protocol rather than the model or harness:"
            "<ul>" + "".join(f"<li>{esc(d)}</li>" for d in protocol) + "</ul></div>" + note
        )
    metric_rows = [
        (
            name,
            percent(d["baseline"]),
            percent(d["run"]),
            points(d["estimate"]),
            _pp_interval(d["ci_low"], d["ci_high"]),
            _floor(d),
            str(d["n_paired"]),
        )
        for name, d in pair["metrics"].items()
    ]
    sections = [
        Section(
            f"Differences: {label}",
            note
            + _difference_chart(pair["metrics"], f"{slug}-diff")
            + _noise_note(pair["metrics"], slug)
            + _table(_METRIC_HEADER, metric_rows),
            anchor=f"{slug}-differences",
        ),
        Section(
            f"Per seed: {label}",
            _seed_chart(pair["per_seed"], f"{slug}-seeds") if pair["per_seed"] else "<p>No paired seed.</p>",
            anchor=f"{slug}-seeds",
        ),
        Section(
            f"Per task: {label}",
            "<p>Success rate per task (mean over its seeds and epochs), side by side.</p>"
            + _table(
                ("task", "baseline", "run", "difference"),
                [
                    (t["task_id"], percent(t["baseline"]), percent(t["run"]), points(t["difference"]))
                    for t in pair["per_task"]
                ],
            ),
            anchor=f"{slug}-tasks",
        ),
    ]
    if pair["step_budgets"]:
        curves = {
            "baseline": [{"budget": b["budget"], **b["baseline"]} for b in pair["step_budgets"]],
            "run": [{"budget": b["budget"], **b["run"]} for b in pair["step_budgets"]],
        }
        rows = [
            (
                str(b["budget"]),
                _with_interval(b["baseline"]),
                _with_interval(b["run"]),
                f"{points(b['difference']['estimate'])} "
                f"{_pp_interval(b['difference']['ci_low'], b['difference']['ci_high'])}",
            )
            for b in pair["step_budgets"]
        ]
        sections.append(
            Section(
                f"Step budgets: {label}",
                "<p>Success rate if every trajectory were cut at N model turns (a trial that needed more "
                "fails).</p>"
                + budget_chart(curves, f"{slug}-budgets")
                + _table(("budget", "baseline [95% CI]", "run [95% CI]", "difference [95% CI]"), rows),
                anchor=f"{slug}-budgets",
            )
        )
    behavior = pair.get("behavior")
    if behavior:
        rows = [
            (name, f"{d['estimate']:+.1f}", _points_interval(d), str(d["n_cells"]))
            for name, d in behavior.items()
            if d
        ]
        sections.append(
            Section(
                f"Behavior: {label}",
                "<p>Paired differences of the behavior metrics (0-100 points, run minus baseline).</p>"
                + _table(("metric", "difference", "95% CI", "paired cells"), rows),
                anchor=f"{slug}-behavior",
            )
        )
    return sections


def _floor(d: dict[str, Any]) -> str:
    """The comparison's noise floor for a metric (compare.json from before noise floors: not shown)."""
    floor = d.get("noise_floor")
    if floor is None:
        return d.get("noise_floor_note") or "n/a"
    return f"{100 * floor:.1f} pp{' (difference under it)' if d.get('under_noise_floor') else ''}"


def _noise_note(metrics: dict[str, dict[str, Any]], slug: str) -> str:
    """Name the differences smaller than what this comparison can tell from seed noise."""
    under = [name for name, d in metrics.items() if d.get("under_noise_floor")]
    if not under:
        return ""
    return (
        f'<p class="warning" id="{slug}-noise" role="note">Under the noise floor: {esc(", ".join(under))}. '
        "These differences are smaller than the one this pairing detects with 80% power given both runs' "
        "seed-to-seed spread, so they are not evidence of a difference.</p>"
    )


def _comparable(value: bool | None) -> str:
    """Whether a run followed its benchmark's official protocol (unknown for older runs)."""
    return "unknown" if value is None else "yes" if value else "no"


def build_compare_report(data: dict[str, Any], out: Path) -> Path:
    """Write `out/compare.html` from the data `compare_runs` returned."""
    runs = data["runs"]
    overview = Section(
        "Runs",
        f"<p>{esc(data['direction'])}. Estimator: {esc(data['estimator'])}.</p>"
        + _table(
            ("", "run", "model", "harness", "seeds", "epochs", "tasks", "status", "comparable"),
            [
                (
                    "baseline" if i == 0 else f"run {i}",
                    r["path"],
                    r["model"],
                    r["harness"],
                    ", ".join(str(s) for s in r["seeds"]),
                    str(r["epochs"]),
                    str(r["n_tasks"]),
                    r["status"],
                    _comparable(r.get("comparable")),
                )
                for i, r in enumerate(runs)
            ],
            sortable=False,
        ),
        anchor="runs",
    )
    sections = [overview]
    for index, pair in enumerate(data["comparisons"]):
        sections += _pair_sections(index, pair)
    header = (
        f"<h1>Comparison · {esc(runs[0]['benchmark'])}</h1>"
        f'<p class="subtitle">{len(runs) - 1} run(s) against the baseline <strong>{esc(runs[0]["path"])}'
        "</strong></p>"
    )
    out.mkdir(parents=True, exist_ok=True)
    return write_text(
        RunDir(out).compare_report,
        document(f"comparison {runs[0]['benchmark']}", header, sections, f"forge-eval {__version__}"),
    )


@REPORT_SECTIONS.register("step_budgets")
def budget_section(run_dir: Path) -> Section | None:
    """Success vs step budget of one run, from `budgets.json` (`--step-budget`); None without it."""
    data = RunDir(run_dir).read_json(RunDir.BUDGETS)
    if data is None:
        return None
    points = [{"budget": b["budget"], **b["metrics"]["success_rate"]} for b in data["budgets"]]
    turns = data.get("model_turns", {})
    rows = [
        (
            str(b["budget"]),
            *(_with_interval(m) for m in b["metrics"].values()),
        )
        for b in data["budgets"]
    ]
    names = list(data["budgets"][0]["metrics"]) if data["budgets"] else []
    return Section(
        "Step budgets",
        f"<p>{esc(data['definition'])}. Model turns per trial: median {esc(turns.get('median'))}, "
        f"90th percentile {esc(turns.get('p90'))}, max {esc(turns.get('max'))}.</p>"
        + budget_chart({"this run": points}, "budgets")
        + _table(("budget", *names), rows),
        anchor="step-budgets",
    )
