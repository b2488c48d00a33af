"""The report's built-in sections, each a function of the run's validated data."""

from __future__ import annotations

import json
import shlex

from forge_eval.reports._charts import outcome_heatmap, seeds_chart
from forge_eval.reports._format import esc, interval, percent
from forge_eval.reports._sections import Section
from forge_eval.reports._trials import Cell, TaskOutcomes
from forge_eval.rundir import NotRecorded, RunDir, RunResults, Source, Upstream, describe

_MAX_ERRORS_SHOWN = 5
_MAX_REASONS_SHOWN = 4
_MAX_ERROR_CHARS = 300


def headline(results: RunResults, outcomes: TaskOutcomes | None) -> Section:
    """Metric | estimate | CI | per seed | tasks | trials, with the estimators as footnotes."""
    notes: dict[str, str] = {}
    levels = {metric.confidence_level for metric in results.metric_list}
    # One level (the usual case) goes in the header; mixed levels are stated in each cell.
    uniform = f"{_level(levels.pop())} CI" if len(levels) == 1 else None
    paper = results.reference.scores if results.reference else None
    rows = []
    for metric in results.metric_list:
        # Letters, not digits: a digit after "pass@2" would read as part of the name.
        letter = notes.setdefault(metric.estimator, _letter(len(notes))) if metric.estimator else None
        note = f'<sup><a href="#estimator-{letter}">[{letter}]</a></sup>' if letter else ""
        level = "" if uniform else f"{_level(metric.confidence_level)} "
        per_seed = ", ".join(f"{s.seed}: {percent(s.estimate)}" for s in metric.per_seed)
        rows.append(
            f'<tr data-metric="{esc(metric.name)}">'
            f'<th scope="row"><abbr title="{esc(metric.estimator)}">{esc(metric.name)}</abbr>{note}</th>'
            f'<td class="num estimate">{percent(metric.estimate)}</td>'
            f'<td class="num ci"{_se_title(metric.standard_error)}>{level}'
            f"{interval(metric.ci_low, metric.ci_high)}</td>"
            f'<td class="per-seed">{esc(per_seed)}</td>'
            f'<td class="num">{metric.n_tasks}</td><td class="num">{metric.n_trials}</td>'
            f"{_paper_cell(paper, metric.name)}</tr>"
        )
    if not rows:
        return Section("Headline", '<p class="warning">results.json lists no metrics.</p>', "headline")
    footnotes = "".join(
        f'<li id="estimator-{letter}">[{letter}] {esc(text)}</li>' for text, letter in notes.items()
    )
    paper_head = "<th>Paper</th>" if paper is not None else ""
    body = (
        f"{_protocol_note(results)}{_subset_note(results)}{_error_note(outcomes)}"
        '<table class="headline"><thead><tr><th>Metric</th><th>Estimate</th>'
        f"<th>{uniform or 'CI'}</th>"
        f"<th>Per seed</th><th>Tasks</th><th>Trials</th>{paper_head}</tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>"
        f"{_reference_note(results)}"
        f'<ol class="footnotes">{footnotes}</ol>'
    )
    return Section("Headline", body, "headline")


def _paper_cell(paper: dict[str, float] | None, name: str) -> str:
    if paper is None:
        return ""
    value = paper.get(name)
    shown = percent(value) if value is not None else '<span class="muted">–</span>'
    return f'<td class="num paper">{shown}</td>'


def _reference_note(results: RunResults) -> str:
    """Where the paper's numbers in the Paper column come from: a reference, not a check of ours."""
    if results.reference is None:
        return ""
    source = f" ({esc(results.reference.source)})" if results.reference.source else ""
    return f'<p class="reference-note">Paper: the score the paper reports for this benchmark{source}.</p>'


def _protocol_note(results: RunResults) -> str:
    """A run that departs from the benchmark's official protocol is not the benchmark's number: say so
    up front, with the first reasons (all of them are in the Protocol section)."""
    record = results.protocol
    if record is None:
        judge = results.judge  # results.json from before protocol records: only the judge was recorded
        if judge is None or judge.comparable:
            return ""
        why = esc(judge.note) if judge.note else "the judge is not the official one"
        return (
            f'<p class="warning" id="judge-note">⚠ Not comparable with published scores: judge '
            f"<code>{esc(judge.model)}</code> — {why}.</p>"
        )
    if record.comparable:
        return ""
    shown = "".join(f"<li>{esc(reason)}</li>" for reason in record.reasons[:_MAX_REASONS_SHOWN])
    more = len(record.reasons) - _MAX_REASONS_SHOWN
    if more > 0:
        shown += f"<li>… and {more} more</li>"
    return (
        '<div class="warning" id="protocol-note"><p>⚠ Not comparable with the benchmark\'s published '
        'scores: this run departs from its official protocol (see <a href="#protocol">Protocol</a>).</p>'
        f'<ul class="plain">{shown}</ul></div>'
    )


def _subset_note(results: RunResults) -> str:
    """Skipped tasks are not failures; the headline is over the tasks that ran."""
    subset = results.subset
    if subset is None or not subset.skipped:
        return ""
    return (
        f'<p class="warning" id="subset-note">{subset.n_run} of {subset.n_total} tasks ran; '
        f"{len(subset.skipped)} cannot run here and are skipped (not scored): see "
        '<a href="#metadata">run metadata</a>.</p>'
    )


def _error_note(outcomes: TaskOutcomes | None) -> str:
    """Say up front how many trials errored: a low score from broken infrastructure is not a result."""
    if outcomes is None:
        return ""
    trials = sum(task.n_trials for task in outcomes.tasks)
    errored = sum(task.n_errored for task in outcomes.tasks)
    if not errored:
        return ""
    return (
        f'<p class="warning" id="errored-note">⚠ {errored} of {trials} trials errored '
        f"({percent(errored / trials)}); they have no score and count as failed. "
        'See the errors in the <a href="#tasks">per-task table</a> and the logs.</p>'
    )


def _level(level: float) -> str:
    return f"{100 * level:g}%"


def _se_title(standard_error: float | None) -> str:
    if standard_error is None:
        return ""
    return f' title="standard error {100 * standard_error:.1f} percentage points"'


def _letter(index: int) -> str:
    """a, b, ..., z, aa, ab, ...: footnote labels."""
    label = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        label = chr(ord("a") + rest) + label
    return label


def protocol(results: RunResults) -> Section:
    """The protocol record: element | official | this run | same?, and the verdict above it."""
    record = results.protocol
    if record is None:
        return Section(
            "Protocol",
            '<p class="warning">This results.json has no protocol record (written by an older '
            "forge-eval), so whether the run followed the benchmark's official protocol is unknown.</p>",
            "protocol",
        )
    if record.comparable:
        verdict = (
            '<p class="ok" id="protocol-verdict">Comparable: every element of the official protocol is the '
            "one this run used.</p>"
        )
    else:
        verdict = '<p class="warning" id="protocol-verdict">Not comparable: ' + esc(
            "; ".join(record.reasons)
        ) + ".</p>"
    rows = []
    for e in record.elements:
        if e.same:
            mark = '<span class="badge complete">same</span>'
        elif e.equivalent:
            mark = f'<span class="badge">equivalent</span> {esc(e.equivalent)}'
        elif isinstance(e.official, NotRecorded):
            mark = '<span class="badge">unknown</span>'
        else:
            mark = '<span class="badge partial">differs</span>'
        note = f'<br><span class="muted">{esc(e.note)}</span>' if e.note else ""
        rows.append(
            f'<tr data-element="{esc(e.element)}"><th scope="row">{esc(e.name)}</th>'
            f"<td>{_source(e.official)}</td><td>{_source(e.ours)}</td><td>{mark}{note}</td></tr>"
        )
    table = (
        '<table class="protocol"><thead><tr><th>Element</th><th>Official</th><th>This run</th>'
        f"<th>Same?</th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
        if rows
        else ""
    )
    return Section("Protocol", verdict + table, "protocol")


def _source(source: Source) -> str:
    """One side of a protocol element; upstream files show their repo@commit:path in code type."""
    if isinstance(source, Upstream):
        value = f"<code>{esc(json.dumps(source.value))}</code> from " if source.value is not None else ""
        return (
            f'{value}<code title="sha256 {esc(source.sha256)}">{esc(source.ref)}</code> '
            f'<span class="muted">sha256 {esc(source.sha256[:12])}</span>'
        )
    return esc(describe(source))


def seed_estimates(results: RunResults) -> Section:
    if not results.metrics:
        return Section("Per-seed estimates", '<p class="warning">No metrics to plot.</p>', "seeds")
    caption = (
        "<p>Each row is a metric: the band is its confidence interval over tasks and seeds, the bar "
        "the pooled estimate, the points the estimate from each seed alone. Seeds far outside the "
        "band point to seed-sensitive behavior.</p>"
    )
    chart = seeds_chart(results.metric_list, tuple(results.seeds))
    return Section("Per-seed estimates", caption + chart, "seeds")


def heatmap(outcomes: TaskOutcomes | None) -> Section:
    if outcomes is None or not outcomes.tasks:
        return Section("Per-task outcomes", _no_trials(outcomes), "heatmap")
    caption = (
        "<p>One cell per task and seed; colour is the fraction of that seed's epochs that passed. "
        "Red hatching marks a cell with an errored trial (no score; counted as not passed); grey "
        "means no trial was recorded. Hover a cell for its counts.</p>"
    )
    return Section("Per-task outcomes", caption + outcome_heatmap(outcomes), "heatmap")


def _no_trials(outcomes: TaskOutcomes | None) -> str:
    if outcomes is not None:
        return f'<p class="warning">{RunDir.TRIALS} has no trials yet.</p>'
    return (
        f'<p class="warning">No {RunDir.TRIALS} in the run directory, so per-task outcomes are not '
        "available. It is written by <code>forge-eval run</code>; re-run the same command to "
        "regenerate it.</p>"
    )


def _seed_cell(cell: Cell | None) -> str:
    if cell is None:
        return '<td class="num missing" data-sort="-1">—</td>'
    fraction = cell.pass_fraction
    error = ""
    if cell.n_errored:
        error = f' <span class="err" title="{cell.n_errored} errored">⚠{cell.n_errored}</span>'
    return f'<td class="num" data-sort="{fraction}">{cell.n_passed}/{cell.n_trials}{error}</td>'


def task_table(outcomes: TaskOutcomes | None) -> Section:
    """One row per task; the columns sort on click (see the page script)."""
    if outcomes is None or not outcomes.tasks:
        return Section("Per-task table", _no_trials(outcomes), "tasks")
    headers = (
        ["Task"]
        + list(outcomes.metadata_columns)
        + [f"Seed {s}" for s in outcomes.seeds]
        + ["Passed", "Mean score", "Errors"]
    )
    head = "".join(f'<th scope="col" tabindex="0">{esc(h)}</th>' for h in headers)
    rows = []
    for task in outcomes.tasks:
        errors = "\n".join(e[:_MAX_ERROR_CHARS] for e in task.errors[:_MAX_ERRORS_SHOWN])
        cells = (
            [f'<th scope="row" class="task">{esc(task.task_id)}</th>']
            + [f"<td>{esc(task.metadata[c])}</td>" for c in outcomes.metadata_columns]
            + [_seed_cell(cell) for cell in task.cells]
            + [
                f'<td class="num" data-sort="{task.pass_fraction}">{percent(task.pass_fraction)}</td>',
                f'<td class="num" data-sort="{task.mean_score if task.mean_score is not None else -1}">'
                f"{percent(task.mean_score)}</td>",
                f'<td class="num" data-sort="{task.n_errored}" title="{esc(errors)}">{task.n_errored}</td>',
            ]
        )
        rows.append(f"<tr>{''.join(cells)}</tr>")
    body = (
        "<p>Per seed: trials passed / trials recorded (⚠ = errored trials). Mean score is over the "
        "trials that produced a score. Click a column header to sort.</p>"
        f'<div class="scroll"><table class="tasks sortable"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    )
    return Section("Per-task table", body, "tasks")


def metadata(results: RunResults) -> Section:
    status = (
        '<span class="badge partial">partial</span>'
        if results.partial
        else '<span class="badge complete">complete</span>'
    )
    versions = "".join(
        f"<li><code>{esc(name)}</code> {esc(version)}</li>"
        for name, version in sorted(results.versions.items())
    )
    fields = [
        ("Status", status),
        ("Command", f"<pre><code>{esc(results.command)}</code></pre>" if results.command else _unrecorded()),
        ("Created", esc(results.created) if results.created else _unrecorded()),
        (
            "Git revision",
            f"<code>{esc(results.git_revision)}</code>" if results.git_revision else _unrecorded(),
        ),
        ("Benchmark", esc(results.benchmark)),
        ("Model", esc(results.model)),
        ("Harness", esc(results.harness)),
        ("Seeds", esc(", ".join(map(str, results.seeds)))),
        ("Epochs", esc(results.epochs)),
        ("Threshold", esc(results.threshold) if results.threshold is not None else _unrecorded()),
        ("Tasks", esc(results.n_tasks) if results.n_tasks is not None else _unrecorded()),
        ("Versions", f'<ul class="plain">{versions}</ul>' if versions else _unrecorded()),
        *_judge_rows(results),
        *_subset_rows(results),
        ("Run directory", f"<code>{esc(results.run_dir.resolve())}</code>"),
    ] + [(esc(key), f"<code>{esc(json.dumps(value))}</code>") for key, value in results.extra.items()]
    rows = "".join(f'<tr><th scope="row">{name}</th><td>{value}</td></tr>' for name, value in fields)
    return Section("Run metadata", f'<table class="meta"><tbody>{rows}</tbody></table>', "metadata")


def _judge_rows(results: RunResults) -> list[tuple[str, str]]:
    judge = results.judge
    if judge is None:
        return []
    parts = [f"<code>{esc(judge.model)}</code> as role <code>{esc(judge.role)}</code>"]
    official = "official judge model and prompts"
    parts.append(official if judge.comparable else "<strong>not the official judge setup</strong>")
    if judge.prompt_sha256:
        parts.append(f"prompt sha256 <code>{esc(judge.prompt_sha256)}</code>")
    if judge.settings:
        parts.append(f"settings <code>{esc(json.dumps(judge.settings, sort_keys=True))}</code>")
    if judge.note:
        parts.append(esc(judge.note))
    return [("Judge", "<br>".join(parts))]


def _subset_rows(results: RunResults) -> list[tuple[str, str]]:
    subset = results.subset
    if subset is None:
        return []
    rows = [("Tasks run", f"{subset.n_run} of {subset.n_total}")]
    if subset.skipped:
        items = "".join(
            f"<li><code>{esc(s.task_id)}</code>: {esc(s.reason)}</li>" for s in subset.skipped
        )
        rows.append(("Skipped tasks", f'<ul class="plain skipped">{items}</ul>'))
    return rows


def _unrecorded() -> str:
    return '<span class="muted">not recorded</span>'


def view_command(results: RunResults) -> str:
    """The shell command that opens this run's logs in Inspect's viewer."""
    return f"inspect view --log-dir {shlex.quote(str(results.logs_path))}"


def rebuild_command(results: RunResults) -> str:
    return f"forge-eval report {shlex.quote(str(results.run_dir.resolve()))}"


def logs(results: RunResults) -> Section:
    where = f"<code>{esc(results.logs_path)}</code>"
    if results.logs_path.is_dir():
        count = len(list(results.logs_path.glob("*.eval")))
        found = f"<p>Inspect logs: {where} ({count} <code>.eval</code> files).</p>"
    else:
        found = f'<p class="warning">The log directory {where} does not exist.</p>'
    body = (
        f"{found}<p>Open the transcripts in Inspect's log viewer:</p>"
        f'<pre class="command"><code>{esc(view_command(results))}</code></pre>'
        "<p>Rebuild this report (for example after adding analyses):</p>"
        f'<pre class="command"><code>{esc(rebuild_command(results))}</code></pre>'
    )
    return Section("Logs", body, "logs")
