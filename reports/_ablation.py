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

ABLATION_REPORT = "report.html"
_COLORS = {"broadcast": "#cf222e", "masked": "#1a7f37", "terminal": "#0969da"}


def _curve_chart(variants: dict[str, Any], key: str, ylabel: str, name: str, percent_axis: bool) -> str:
    def draw(figure: Figure) -> None:
        ax = figure.add_subplot()
        for variant, data in variants.items():
            curve = data["curves"][key]
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
            scale = 100 if percent_axis else 1
            color = _COLORS.get(variant)
            ax.plot(steps, [scale * v for v in mean], label=variant, color=color, linewidth=1.6)
            ax.fill_between(
                steps,
                [scale * v for v in low],
                [scale * v for v in high],
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


def _ci(d: dict[str, Any]) -> str:
    low_high = interval(d["ci_low"], d["ci_high"])
    return f'<td class="num">{percent(d["estimate"])}</td><td class="num">{low_high}</td>'


def _points(d: dict[str, Any]) -> str:
    return (
        f'<td class="num">{100 * d["estimate"]:+.1f}</td>'
        f'<td class="num">[{100 * d["ci_low"]:+.1f}, {100 * d["ci_high"]:+.1f}]</td>'
    )


def _ablation_sections(data: dict[str, Any]) -> list[Section]:
    variants, verdict = data["variants"], data["verdict"]
    sentences = "".join(f"<li>{esc(s)}</li>" for s in [*verdict["pairs"], *verdict.get("internal_calls", [])])
    sections = [
        Section(
            "Verdict",
            f"<p><strong>{esc(verdict['headline'])}</strong></p><ul>{sentences}</ul>"
            f'<p class="muted">{esc(verdict["caveat"])}</p>',
        )
    ]
    rows = "".join(
        f"<tr><th>{esc(v)}</th>{_ci(d['final_success'])}{_ci(d['auc_success'])}"
        f'<td class="num">{esc(", ".join(percent(x) for x in d["final_success_per_seed"].values()))}</td>'
        f'<td class="num">{_nats(d["internal_entropy_final"])}</td>'
        f'<td class="num">{d["seconds_per_step"]:.2f}</td></tr>'
        for v, d in variants.items()
    )
    estimator = esc(next(iter(variants.values()))["final_success"]["estimator"])
    sections.append(
        Section(
            "Final success",
            '<table class="headline sortable"><thead><tr><th>variant</th><th>final held-out success</th>'
            "<th>95% CI</th><th>area under the curve</th><th>95% CI</th><th>per seed (final)</th>"
            "<th>internal-call surprisal (nats)</th><th>s/step</th></tr></thead>"
            f"<tbody>{rows}</tbody></table>"
            f'<p class="muted">Greedy success on held-out tasks. {estimator}. Area under the curve: '
            "mean success "
            "over the checkpoints after step 0. Internal-call surprisal: mean -logprob of the planner and "
            "subagent tokens sampled in the last 5 training steps (uniform over the 12 filler "
            "words: 2.48); it "
            "falls when a variant trains those calls, and drifts in the others through the weights every "
            "call shares.</p>",
        )
    )
    if data["pairs"]:
        pair_rows = "".join(
            f"<tr><th>{esc(p['b'])} − {esc(p['a'])}</th>{_points(p['final'])}{_points(p['auc'])}"
            f"<td>{'yes' if p['seeds_agree'] else 'no'}</td><td "
            f'class="num">{p["final"]["n_paired"]}</td></tr>'
            for p in data["pairs"]
        )
        sections.append(
            Section(
                "Paired differences",
                '<table class="sortable"><thead><tr><th>difference</th><th>final (points)</th><th>95% CI</th>'
                "<th>area under the curve (points)</th><th>95% CI</th><th>all seeds same "
                "sign</th><th>cells</th>"
                f"</tr></thead><tbody>{pair_rows}</tbody></table>"
                f'<p class="muted">{esc(data["pairs"][0]["final"]["estimator"])}.</p>',
            )
        )
    sections.append(
        Section(
            "Learning curves",
            "<p>Mean over seeds (line) and the range over seeds (band).</p>"
            + _curve_chart(variants, "heldout_success", "held-out success (%)", "heldout", True)
            + _curve_chart(variants, "train_reward", "training reward (%)", "reward", True)
            + _curve_chart(variants, "internal_entropy", "internal-call surprisal (nats)", "entropy", False),
        )
    )
    runs = "".join(
        f"<tr><td>{esc(r['config']['variant'])}</td><td>{r['config']['seed']}</td><td><code>{esc(r['init_hash'])}</code></td>"
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
            "same order "
            "(equal hashes below).</p>"
            '<table class="sortable"><thead><tr><th>variant</th><th>seed</th><th>initial weights</th>'
            f"<th>data order</th><th>final "
            f"weights</th><th>s/step</th></tr></thead><tbody>{runs}</tbody></table>",
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
    target = out / ABLATION_REPORT
    partial = target.with_name(f".{ABLATION_REPORT}.tmp")
    partial.write_text(html, encoding="utf-8")
    partial.replace(target)
    return target
