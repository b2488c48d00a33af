"""The report's "Harness matrix" section: a run of several harnesses on the same tasks and seeds
(results.json's `harnesses`), each harness's numbers side by side and every pair's paired differences."""

from __future__ import annotations

from typing import Any

from forge_eval.reports._format import esc, interval, percent, points
from forge_eval.reports._sections import Section
from forge_eval.rundir import RunResults, metric_order

_USAGE = (("calls", "calls"), ("prompt_tokens", "prompt tokens"), ("completion_tokens", "completion tokens"))


def harness_matrix(results: RunResults) -> Section | None:
    """Per harness: headline metrics with CIs, calls and tokens per task, the five capabilities; per pair
    of harnesses: paired differences overall, at matched step budgets, of capabilities and of usage."""
    matrix = results.harnesses
    if matrix is None:
        return None
    order = matrix.order
    runs = matrix.runs
    titles: dict[str, str] = (matrix.model_extra or {}).get("capability_titles", {})
    metrics = sorted({m for name in order for m in runs[name]["metrics"]}, key=metric_order)
    head = "".join(f"<th>{esc(m)}</th>" for m in metrics) + "".join(f"<th>{t} / task</th>" for _, t in _USAGE)
    rows = []
    for name in order:
        run = runs[name]
        cells = "".join(f'<td class="num">{_with_ci(run["metrics"].get(m))}</td>' for m in metrics)
        usage = run["usage"]["mean_per_task"]
        cells += "".join(f'<td class="num">{_count(usage.get(key))}</td>' for key, _ in _USAGE)
        status = "" if run["status"] == "complete" else ' <span class="warning">(partial)</span>'
        link = f'<a href="{esc(run["run_dir"])}/report.html"><code>{esc(run["run_dir"])}</code></a>'
        rows.append(
            f'<tr data-harness="{esc(name)}"><th scope="row">{esc(name)}{status}<br>{link}</th>{cells}</tr>'
        )
    body = (
        f"<p>The same tasks and seeds under {len(order)} harnesses; the headline above is the baseline's, "
        f"<code>{esc(matrix.baseline)}</code>. Calls and tokens: the agent's own model calls per trial, "
        "averaged per task, then over tasks.</p>"
        f'<table class="harness-matrix"><thead><tr><th>Harness</th>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table>"
        f"{_capabilities(titles, order, runs)}"
        f"{''.join(_pair(pair, titles) for pair in matrix.pairs)}"
        f'<p class="estimator">Step budgets: {esc(", ".join(map(str, matrix.step_budgets)) or "none")} '
        f"model turns ({esc((matrix.model_extra or {}).get('step_budget_rule', ''))}): a trial that needed "
        f"more turns fails at that budget. Estimator: {esc(matrix.estimator)}.</p>"
    )
    return Section("Harness matrix", body, "harness-matrix")


def _capabilities(titles: dict[str, str], order: list[str], runs: dict[str, dict[str, Any]]) -> str:
    names = list(dict.fromkeys(c for name in order for c in runs[name]["capabilities"]))
    head = "".join(f"<th>{esc(name)}</th>" for name in order)
    rows = "".join(
        f'<tr><th scope="row">{esc(titles.get(c, c))}</th>'
        + "".join(f'<td class="num">{_score(runs[n]["capabilities"].get(c))}</td>' for n in order)
        + "</tr>"
        for c in names
    )
    return (
        "<h3>Capabilities (0-100, 95% CI)</h3>"
        f'<table class="harness-capabilities"><thead><tr><th>Capability</th>{head}</tr></thead>'
        f"<tbody>{rows}</tbody></table>"
    )


def _pair(pair: dict[str, Any], titles: dict[str, str]) -> str:
    rows = [(name, d) for name, d in sorted(pair["metrics"].items(), key=lambda item: metric_order(item[0]))]
    rows += [(f"success at {b['budget']} turns", b["difference"]) for b in pair["step_budgets"]]
    lines = "".join(
        f'<tr><th scope="row">{esc(label)}</th><td class="num">{percent(d["baseline"])}</td>'
        f'<td class="num">{percent(d["run"])}</td><td class="num">{points(d["estimate"])}</td>'
        f'<td class="num">{interval(d["ci_low"], d["ci_high"], points)}</td>'
        f'<td class="num">{d["n_paired"]}</td></tr>'
        for label, d in rows
    )
    capabilities = "".join(
        f'<tr><th scope="row">{esc(titles.get(name, name))}</th><td class="num" colspan="2"></td>'
        f'<td class="num">{_signed(d)}</td><td class="num">{_score_interval(d)}</td>'
        f'<td class="num">{(d or {}).get("n_cells", "")}</td></tr>'
        for name, d in pair["capabilities"].items()
    )
    usage = "".join(
        f'<tr><th scope="row">{esc(name)} / task</th><td class="num" colspan="2"></td>'
        f'<td class="num">{_count(d["estimate"], signed=True)}</td>'
        f'<td class="num">{_count_interval(d)}</td><td class="num">{d["n_paired"]}</td></tr>'
        for name, d in pair["usage"].items()
    )
    notes = "".join(f'<p class="warning">{esc(note)}</p>' for note in pair["matching"]["notes"])
    return (
        f"<h3>{esc(pair['direction'])}</h3>{notes}"
        f'<table class="harness-pair" data-pair="{esc(pair["a"])}-{esc(pair["b"])}"><thead><tr><th></th>'
        f"<th>{esc(pair['a'])}</th><th>{esc(pair['b'])}</th><th>Difference</th><th>95% CI</th>"
        f"<th>Paired cells</th></tr></thead><tbody>{lines}{capabilities}{usage}</tbody></table>"
    )


def _with_ci(metric: dict[str, Any] | None) -> str:
    if metric is None:
        return "n/a"
    return f"{percent(metric['estimate'])} {interval(metric['ci_low'], metric['ci_high'], missing='')}"


def _score(item: dict[str, Any] | None) -> str:
    if item and item.get("not_measurable"):
        return esc(item["not_measurable"])
    if not item or item.get("estimate") is None:
        return "n/a"
    return f"{item['estimate']:.1f} {_score_interval(item)}"


def _score_interval(item: dict[str, Any] | None) -> str:
    if not item or item.get("ci_low") is None:
        return ""
    return f"[{item['ci_low']:.1f}, {item['ci_high']:.1f}]"


def _signed(item: dict[str, Any] | None) -> str:
    return "n/a" if not item or item.get("estimate") is None else f"{item['estimate']:+.1f}"


def _count(value: float | None, signed: bool = False) -> str:
    if value is None:
        return "n/a"
    return f"{value:+,.1f}" if signed else f"{value:,.1f}"


def _count_interval(d: dict[str, Any]) -> str:
    if d["ci_low"] is None:
        return ""
    return f"[{d['ci_low']:+,.1f}, {d['ci_high']:+,.1f}]"
