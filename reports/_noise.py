"""The report's noise-floor and cost sections, drawn from results.json (`noise_floor`, `coverage`, `cost`).

A results.json from before these blocks existed has none of them: the sections then say so in one line
instead of disappearing, so a reader knows the numbers were not recorded rather than zero.
"""

from __future__ import annotations

from typing import Any

from forge_eval.reports._format import esc, percent
from forge_eval.reports._sections import Section
from forge_eval.rundir import RunDir, RunResults

_FAILURES_SHOWN = 8
_FLIPPED_SHOWN = 12


def _not_recorded(what: str) -> str:
    return (
        f'<p class="muted">This {RunDir.RESULTS} has no {esc(what)} (written by an older forge-eval); '
        "re-run the same command to add it.</p>"
    )


def _pp(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f} pp"


def _coverage(block: dict[str, Any] | None) -> str:
    if block is None:
        return _not_recorded("coverage")
    failures = block["infrastructure_failures"]
    missing = f", {block['not_attempted']} never attempted" if block["not_attempted"] else ""
    text = (
        f'<p id="coverage">Coverage: {block["scored"]} of {block["attempted"]} attempted trials scored '
        f"({percent(block['coverage'])}){missing}.</p>"
    )
    if not failures:
        return text
    items = "".join(
        f'<li>{f["count"]} × <code title="{esc(f.get("example", ""))}">{esc(f["error"])}</code></li>'
        for f in failures[:_FAILURES_SHOWN]
    )
    more = len(failures) - _FAILURES_SHOWN
    items += f"<li>… and {more} other messages</li>" if more > 0 else ""
    return (
        text + "<p>Infrastructure failures (no score; counted as failed in the metrics):</p>"
        f'<ul class="plain failures">{items}</ul>'
    )


def _floor(block: dict[str, Any] | None) -> str:
    if block is None:
        return _not_recorded("noise floor")
    if block["flip_rate"] is None:
        return f'<p class="muted">{esc(block["note"])}.</p>'
    flipped = sorted((t for t in block["per_task_flip"] if t["flip_rate"] > 0), key=lambda t: -t["flip_rate"])
    names = ", ".join(f"{esc(t['task_id'])} ({percent(t['flip_rate'])})" for t in flipped[:_FLIPPED_SHOWN])
    more = len(flipped) - _FLIPPED_SHOWN
    names += f" and {more} more" if more > 0 else ""
    mdd = (
        f"<strong>{_pp(block['mdd'])}</strong> (normal approximation {_pp(block['mdd_normal'])})"
        if block["mdd"] is not None
        else esc(block["note"])
    )
    rows = [
        ("Verdict flip rate", f"{percent(block['flip_rate'])} of pairs of trials from different seeds"),
        (
            "Tasks that flipped",
            f"{block['n_tasks_flipped']} of {block['n_tasks_with_seeds']} ({percent(block['tasks_flipped'])})"
            + (f": {names}" if names else ""),
        ),
        ("Seed-to-seed SD within a task", _pp(block["seed_sd"])),
        (
            f"Minimum detectable difference ({block['power']:.0%} power, alpha {block['alpha']:g})",
            mdd,
        ),
    ]
    table = "".join(f'<tr><th scope="row">{name}</th><td>{value}</td></tr>' for name, value in rows)
    return (
        "<p>How far apart two runs must be before the gap means anything: a paired comparison "
        "(<code>forge-eval compare</code>) of the same tasks and seeds as this run detects a difference in "
        f"{esc(block['metric'])} of the size below with {block['power']:.0%} power; smaller differences are "
        "within this run's seed noise.</p>"
        f'<table class="meta noise-floor"><tbody>{table}</tbody></table>'
        f'<p class="muted">{esc(block["estimator"])}.</p>'
    )


def noise_floor(results: RunResults) -> Section:
    """Verdict flips across seeds, the minimum detectable difference, and coverage."""
    return Section("Noise floor", _floor(results.noise_floor) + _coverage(results.coverage), "noise-floor")


_COLUMNS = (
    ("calls", "Agent calls", "{:,.0f}"),
    ("prompt_tokens", "Prompt tokens", "{:,.0f}"),
    ("cached_tokens", "of them cached", "{:,.0f}"),
    ("completion_tokens", "Completion tokens", "{:,.0f}"),
    ("role_calls", "Judge/grader calls", "{:,.0f}"),
    ("role_tokens", "Judge/grader tokens", "{:,.0f}"),
    ("wall_s", "Wall time (s)", "{:,.1f}"),
)


def _cost_rows(label: str, totals: dict[str, Any]) -> str:
    per = totals["per_trial"]
    cells = "".join(
        f'<td class="num">{fmt.format(totals[key])}<br><span class="muted">'
        f"{fmt.replace('.0f', '.1f').format(per[key]) if per[key] is not None else 'n/a'}</span></td>"
        for key, _, fmt in _COLUMNS
    )
    retried = f", {totals['n_retried']} retried" if totals["n_retried"] else ""
    return (
        f'<tr><th scope="row">{esc(label)}<br><span class="muted">{totals["n_attempts"]} attempts, '
        f"{totals['n_trials']} trials{retried}</span></th>{cells}</tr>"
    )


def cost(results: RunResults) -> Section:
    """Calls, tokens and wall time: in total and per trial, per harness, every attempt counted."""
    block = results.cost
    if block is None:
        return Section("Cost", _not_recorded("cost"), "cost")
    head = "".join(f"<th>{name}</th>" for _, name, _ in _COLUMNS)
    rows = [_cost_rows(h or "(harness not recorded)", t) for h, t in block["per_harness"].items()]
    if len(rows) != 1:
        rows.append(_cost_rows("total", block["total"]))
    body = (
        "<p>Each cell: the total over every attempt, and below it the same per trial (task × seed × epoch), "
        "so a retried trial carries the cost of its retries.</p>"
        f'<div class="scroll"><table class="cost"><thead><tr><th></th>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>"
        f'<p class="muted">{esc(block["estimator"])}.</p>'
    )
    return Section("Cost", body, "cost")
