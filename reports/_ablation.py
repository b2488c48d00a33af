"""The credit ablation's report: `DIR/report.html` from `DIR/ablation.json` and/or `DIR/replay.json`.

The page shell of every forge-eval report (`_page.document`), `svg_figure` charts and `Section`s; its
own sections, because an ablation is not a benchmark run (no results.json, no trials).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from matplotlib.figure import Figure

from forge_eval import __version__
from forge_eval._errors import ForgeError
from forge_eval.reports._format import esc, interval, percent
from forge_eval.reports._page import document
from forge_eval.reports._sections import Section
from forge_eval.reports._svg import svg_figure
from forge_eval.rundir import write_text

ABLATION_REPORT = "report.html"
_COLORS = {"broadcast": "#cf222e", "masked": "#1a7f37", "terminal": "#0969da"}


def _curve_chart(variants: dict[str, Any], key: str, ylabel: str, name: str, percent_axis: bool) -> str:
    """Every seed's curve (thin), the mean over seeds (thick) and the band over runs, per variant."""

    def draw(figure: Figure) -> None:
        ax = figure.add_subplot()
        scale = 100 if percent_axis else 1
        for variant, data in variants.items():
            curve = data["curves"][key]
            color = _COLORS.get(variant)
            for values in curve.get("per_seed", {}).values():
                points = [(s, v) for s, v in zip(curve["step"], values, strict=True) if v is not None]
                if points:
                    steps, ys = zip(*points, strict=True)
                    ax.plot(steps, [scale * y for y in ys], color=color, linewidth=0.6, alpha=0.35)
            points = [
                (s, m, lo, hi)
                for s, m, lo, hi in zip(
                    curve["step"], curve["mean"], curve["low"], curve["high"], strict=True
                )
                if m is not None
            ]
            if not points:
                continue
            steps, mean, low, high = zip(*points, strict=True)
            ax.plot(steps, [scale * v for v in mean], label=variant, color=color, linewidth=1.8)
            band = [(s, lo, hi) for s, lo, hi in zip(steps, low, high, strict=True) if lo is not None]
            if band:
                bs, blo, bhi = zip(*band, strict=True)
                ax.fill_between(
                    bs,
                    [scale * v for v in blo],
                    [scale * v for v in bhi],
                    color=color,
                    alpha=0.15,
                    linewidth=0,
                )
        ax.set_xlabel("training step")
        ax.set_ylabel(ylabel)
        ax.legend(frameon=False)
        ax.grid(alpha=0.3)

    return svg_figure(draw, figsize=(6.4, 3.0), name=name)


def _nats(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


def _points(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:+.1f}"


def _span(low: float | None, high: float | None) -> str:
    return "n/a" if low is None or high is None else f"[{_points(low)}, {_points(high)}]"


def _p(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3g}"


def _per_seed(d: dict[str, Any]) -> str:
    return " ".join(f"{100 * x:.0f}" for x in d["per_seed"].values())


def _bounded(d: dict[str, Any]) -> str:
    """A variant's 95% Wilson interval over runs (inside [0, 100])."""
    return interval(d["bounded_low"], d["bounded_high"])


def _success_table(variants: dict[str, Any]) -> str:
    rows = "".join(
        f"<tr><th>{esc(v)}</th>"
        f'<td class="num">{esc(_per_seed(d["final_success"]))}</td>'
        f'<td class="num">{percent(d["final_success"]["estimate"])}</td>'
        f'<td class="num">{_bounded(d["final_success"])}</td>'
        f'<td class="num">{interval(d["final_success"]["boot_low"], d["final_success"]["boot_high"])}</td>'
        f'<td class="num">{percent(d["auc_success"]["estimate"])} '
        f"{_bounded(d['auc_success'])}</td>"
        f'<td class="num">{d["seeds_learned"]}/{d["final_success"]["n_runs"]}</td>'
        f'<td class="num">{_nats(d["internal_entropy_final"])}</td>'
        f'<td class="num">{d["seconds_per_step"]:.2f}</td></tr>'
        for v, d in variants.items()
    )
    return (
        '<table class="headline sortable"><thead><tr><th>variant</th><th>final held-out success per seed (%)'
        "</th><th>mean over runs</th><th>95% Wilson interval (runs)</th>"
        "<th>95% crossed bootstrap (runs x tasks)</th><th>area under the curve [95% Wilson]</th>"
        "<th>runs reaching 80%</th>"
        "<th>internal-call surprisal (nats)</th><th>s/step</th></tr></thead>"
        f"<tbody>{rows}</tbody></table>"
    )


def _pairs_table(pairs: list[dict[str, Any]], level: float) -> str:
    rows = []
    for p in pairs:
        for metric, label in (("final", "final"), ("auc", "area under the curve")):
            d = p[metric]
            rows.append(
                f"<tr><th>{esc(p['b'])} − {esc(p['a'])}</th><td>{label}</td>"
                f'<td class="num">{esc(" ".join(_points(x) for x in d["per_seed"].values()))}</td>'
                f'<td class="num">{_points(d["estimate"])}</td>'
                f'<td class="num">{_span(d["t_low"], d["t_high"])}</td>'
                f'<td class="num">{_span(d["boot_low"], d["boot_high"])}</td>'
                f'<td class="num">{_p(d["p"])}</td><td class="num">{_p(d["p_adjusted"])}</td>'
                f"<td>{'yes' if p['told_apart'][metric] else 'no'}</td></tr>"
            )
    level_text = f"{100 * level:.1f}%"
    return (
        '<table class="sortable"><thead><tr><th>difference</th><th>metric</th><th>per seed (points)</th>'
        f"<th>mean (points)</th><th>{level_text} t interval</th><th>{level_text} crossed bootstrap</th>"
        "<th>sign-flip p</th><th>corrected p</th><th>told apart</th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


def _mode_sections(mode: str, summary: dict[str, Any], several: bool) -> list[Section]:
    variants, verdict, inference = summary["variants"], summary["verdict"], summary["inference"]
    suffix = f" ({mode})" if several else ""
    anchor = mode.replace("-", "")
    sentences = "".join(
        f"<li>{esc(s)}</li>" for s in [*verdict["pairs"], verdict["learned"], *verdict["internal_calls"]]
    )
    sections = [
        Section(
            f"Verdict{suffix}",
            f"<p>Loss aggregation <code>{esc(mode)}</code>.</p>"
            f"<p><strong>{esc(verdict['headline'])}</strong></p><ul>{sentences}</ul>"
            f'<p class="muted">{esc(verdict["method"])}</p>',
            anchor=f"verdict-{anchor}",
        ),
        Section(
            f"Success per run{suffix}",
            _success_table(variants)
            + '<p class="muted">Greedy success on the held-out tasks, one value per training run (seed). '
            "Intervals are over runs: a Wilson score interval of the mean over seeds (the runs as the "
            "sample; it stays inside [0, 100] and keeps a width when every run is at 100%), and a bootstrap "
            "that resamples seeds and held-out tasks independently. Area under the curve: mean success over "
            "the checkpoints after step 0. Internal-call surprisal: mean -logprob of the planner and "
            "subagent tokens sampled in the last 5 training steps (uniform over the 12 filler words: "
            "2.48).</p>",
            anchor=f"success-{anchor}",
        ),
    ]
    if summary["pairs"]:
        sections.append(
            Section(
                f"Run-level differences{suffix}",
                _pairs_table(summary["pairs"], inference["level"])
                + '<p class="muted">Per seed: mean over held-out tasks of b − a. '
                + f"{esc(inference['correction'])}"
                f"; at least {inference['runs_needed']} runs per variant are needed before any pair can be "
                f"told apart ({inference['n_runs']} here).</p>",
                anchor=f"pairs-{anchor}",
            )
        )
    sections.append(
        Section(
            f"Learning curves{suffix}",
            "<p>Thin lines: each seed; thick: the mean over seeds; band: pointwise 95% t interval over "
            "runs.</p>"
            + _curve_chart(variants, "heldout_success", "held-out success (%)", f"heldout-{anchor}", True)
            + _curve_chart(variants, "train_reward", "training reward (%)", f"reward-{anchor}", True)
            + _curve_chart(
                variants, "internal_entropy", "internal-call surprisal (nats)", f"entropy-{anchor}", False
            ),
            anchor=f"curves-{anchor}",
        )
    )
    return sections


def _ablation_sections(data: dict[str, Any]) -> list[Section]:
    modes = data["by_loss_agg"]
    sections = [s for mode, summary in modes.items() for s in _mode_sections(mode, summary, len(modes) > 1)]
    runs = "".join(
        f"<tr><td>{esc(r['config']['loss_agg'])}</td><td>{esc(r['config']['variant'])}</td>"
        f"<td>{r['config']['seed']}</td><td><code>{esc(r['init_hash'])}</code></td>"
        f"<td><code>{esc(r['data_hash'])}</code></td><td><code>{esc(r['final_hash'])}</code></td>"
        f'<td class="num">{r["seconds_per_step"]:.2f}</td></tr>'
        for r in data["runs"]
    )
    config = "".join(f"<tr><th>{esc(k)}</th><td>{esc(v)}</td></tr>" for k, v in data["config"].items())
    sections.append(
        Section(
            "Runs and settings",
            f'<table class="meta"><tbody>{config}<tr><th>command</th>'
            f"<td><code>{esc(data.get('command') or '')}</code></td></tr>"
            f"<tr><th>held-out tasks</th><td>{esc(', '.join(data['heldout_tasks']))}</td></tr>"
            "</tbody></table>"
            "<p>Every variant of a seed starts from the same weights and sees the same tasks in the "
            "same order (equal hashes below).</p>"
            '<table class="sortable"><thead><tr><th>loss aggregation</th><th>variant</th><th>seed</th>'
            "<th>initial weights</th><th>data order</th><th>final weights</th><th>s/step</th></tr></thead>"
            f"<tbody>{runs}</tbody></table>",
        )
    )
    return sections


def _share(d: dict[str, Any] | None) -> str:
    if not d or d.get("estimate") is None:
        return '<td class="num missing">n/a</td>'
    ci = "" if d.get("ci_low") is None else f" {interval(d['ci_low'], d['ci_high'])}"
    return f'<td class="num">{percent(d["estimate"])}{ci}</td>'


def _replay_sections(data: dict[str, Any]) -> list[Section]:
    sections = []
    roles = data["roles"]
    for harness, h in data["harnesses"].items():
        head = "".join(f"<th>{esc(r)}</th>" for r in roles)
        body = []
        for variant, v in h["variants"].items():
            body.append(
                f"<tr><th>{esc(variant)}</th><td>tokens</td>{_share(v['trainable_fraction'])}"
                + "".join(_share(v["token_share"][r]) for r in roles)
                + "</tr>"
            )
            advantage = v.get("advantage_share")
            body.append(
                "<tr><th></th><td>advantage mass</td><td></td>"
                + (
                    "".join(_share(advantage[r]) for r in roles)
                    if advantage
                    else f'<td colspan="{len(roles)}" class="muted">{esc(v.get("advantage_note", ""))}</td>'
                )
                + "</tr>"
            )
        calls = ", ".join(f"{esc(k)} {n}" for k, n in sorted(h["calls_per_role"].items()))
        dropped = ", ".join(f"{esc(k)} {n}" for k, n in h["discarded"].items()) or "none"
        sections.append(
            Section(
                f"Replay: {harness}",
                f"<p>{h['n_rollouts']} rollouts used (discarded: {dropped}); calls per role: "
                f"{calls or 'none'}.</p>"
                '<div class="scroll"><table><thead><tr><th>variant</th><th>share '
                "of</th><th>trainable / all</th>"
                f"{head}</tr></thead><tbody>{''.join(body)}</tbody></table></div>",
                anchor=f"replay-{harness}",
            )
        )
    if sections:
        sections.append(Section("Replay estimator", f'<p class="muted">{esc(data["estimator"])}.</p>'))
    return sections


def build_ablation_report(out: Path) -> Path:
    """Write `out/report.html` from `out/ablation.json` and/or `out/replay.json`."""
    sections: list[Section] = []
    title = []
    for name, render, label in (
        ("ablation.json", _ablation_sections, "credit ablation"),
        ("replay.json", _replay_sections, "credit replay"),
    ):
        path = out / name
        if path.is_file():
            sections += render(json.loads(path.read_text()))
            title.append(label)
    if not sections:
        raise ForgeError(
            f"{out} has neither ablation.json nor replay.json", hint="run `forge-eval ablate credit` first"
        )
    heading = " + ".join(title)
    header = (
        f'<h1>{esc(heading.capitalize())}</h1><p class="subtitle">Does Eq. (1)\'s broadcast credit matter? '
        "broadcast (every call learns), masked (only calls that act on the environment), terminal (only the "
        "final call).</p>"
    )
    html = document(heading, header, sections, f"forge-eval {__version__}")
    return write_text(out / ABLATION_REPORT, html)
