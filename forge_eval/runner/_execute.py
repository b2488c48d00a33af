"""`forge-eval run`: one Inspect task per seed through eval_set, then results.json, trials.csv, report."""

import json
import os
import shutil
import sys
from contextlib import ExitStack, suppress
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd
from inspect_ai import Task, eval_set
from inspect_ai.log import EvalLog

from forge_eval._errors import ForgeError, UsageError
from forge_eval.analysis import (
    analyze_run,
    cost_summary,
    noise_floor,
    read_run_logs,
    record_usage,
    run_coverage,
    summarize_trials,
    trials_table,
)
from forge_eval.benchmarks import SAMPLING_KEYS, RunUsed
from forge_eval.harnesses import HARNESSES, ExternalHarness, harness_settings
from forge_eval.models import EMBEDDED_MODELS
from forge_eval.reports import build_report
from forge_eval.rundir import (
    PRIVATE_DIR_MODE,
    JudgeInfo,
    ProtocolRecord,
    ReferenceScores,
    RunDir,
    RunResults,
    SkippedTask,
    SubsetInfo,
    Value,
    element,
    make_private,
    write_json,
    write_results,
    write_trials,
)
from forge_eval.runner._model import ModelServing, ResolvedModel, resolved_model
from forge_eval.runner._plan import RunPlan, plan_run
from forge_eval.runner._progress import RunProgress, error_line, finished_samples, run_progress
from forge_eval.runner._provenance import git_revision, versions
from forge_eval.runner._spec import RunSpec
from forge_eval.upstream import TreeCheck, trees_read

# What makes two invocations the same run (a re-run resumes it; anything else is refused). The base
# URL is part of it: another endpoint may serve another model or quantization under the same name.
_IDENTITY_KEYS = (
    "benchmark",
    "harness",
    "model",
    "epochs",
    "limit",
    "quick",
    "task_options",
    "temperature",
    "model_base_url",
    "judge",
    "model_roles",
    "data_dir",
    "deterministic",
    "max_tokens",
)
_METADATA_COLUMNS = ("difficulty", "category")
# Inspect retries a failing model call without bound by default; a dead endpoint then hangs the run.
_MAX_RETRIES = 5
# Tries per seed: a seed that failed is run again (only its unfinished samples) if the model answers.
_SEED_ATTEMPTS = 3


@dataclass(frozen=True)
class RunResult:
    """Where a finished (or partial) run left its outputs, and its summary."""

    out: Path
    results: dict[str, Any]
    report: Path | None
    #: "seed S task T: message" per sample that ended in an error.
    errors: tuple[str, ...] = ()

    @property
    def complete(self) -> bool:
        return self.results["status"] == "complete"


def _identity(spec: RunSpec, harness: str) -> dict[str, Any]:
    fields = asdict(spec)
    fields["harness"] = harness
    fields["data_dir"] = str(spec.data_dir) if spec.data_dir else None
    return {k: fields[k] for k in _IDENTITY_KEYS}


def _previous_seeds(spec: RunSpec, harness: str) -> list[int]:
    """The seeds an earlier invocation of this run recorded; refuse a different run in the same place."""
    marker = RunDir(spec.out).run_marker
    if not marker.is_file():
        return []
    previous = json.loads(marker.read_text())
    before = previous.get("identity", {})
    identity = _identity(spec, harness)
    # A key an older forge-eval did not record cannot tell two runs apart: only recorded keys count.
    changed = sorted(k for k in identity if k in before and before[k] != identity[k])
    if changed:
        raise UsageError(
            f"{spec.out} already holds a different run (differs in: {', '.join(changed)})",
            hint="use another --out directory, or repeat the original command to resume that run",
        )
    return list(previous.get("seeds", []))


def claim_run_dir(spec: RunSpec, harness: str, logs: bool = True) -> None:
    """Create the run directory and record the run in it (seeds accumulate over invocations).

    Unless `spec.shared_run_dir`, only this uid may read it: a directory this call creates (or finds
    empty) is made 0700 before anything is written into it, and logs/ is made 0700 before Inspect writes
    there (`make_private`). A directory that cannot be created or written is a usage error, and whatever
    this call created is removed again. Without `logs` (a harness matrix's own directory, whose logs are
    its harnesses' run directories') no logs/ is made.
    """
    run = RunDir(spec.out)
    identity = _identity(spec, harness)
    seeds = sorted(set(_previous_seeds(spec, harness)) | set(spec.seeds))
    created = _missing_ancestors(spec.out)
    try:
        fresh = bool(created) or not any(spec.out.iterdir())
        spec.out.mkdir(parents=True, exist_ok=True)
        if fresh and not spec.shared_run_dir:
            spec.out.chmod(PRIVATE_DIR_MODE)  # mkdir's mode is cut by the umask; chmod's is not
        write_json(run.run_marker, {"identity": identity, "seeds": seeds})
        if not spec.shared_run_dir:
            if logs:
                run.logs.mkdir(exist_ok=True)
            make_private(run)
    except OSError as e:
        for path in created:
            shutil.rmtree(path, ignore_errors=True)
        raise UsageError(
            f"cannot write the run directory {spec.out}: {e.strerror or e}",
            "pass a writable --out DIR",
        ) from None


def _missing_ancestors(path: Path) -> list[Path]:
    """`path` and its ancestors that do not exist yet, outermost first."""
    missing = []
    for candidate in [path, *path.parents]:
        if candidate.exists():
            break
        missing.append(candidate)
    return missing[::-1]


def run_benchmark(spec: RunSpec, display: str | None = None) -> RunResult:
    """Run `spec` (resuming whatever an earlier, interrupted run of it finished) and summarize it."""
    return execute(plan_run(spec), display)


def execute(plan: RunPlan, display: str | None = None) -> RunResult:
    """Run a validated plan: start the model (and judge), claim the run directory, eval_set, summarize.

    Without a terminal (Inspect's live display off) progress lines go to stderr (`RunProgress`). A
    seed that fails is retried, unless the model has stopped answering: then the run ends at once with
    one error that names the endpoint, and its finished samples are kept for a resumed run.
    """
    spec = plan.spec
    _previous_seeds(spec, plan.harness)  # refuse a different run before starting any model
    with ExitStack() as stack:
        model = stack.enter_context(
            resolved_model(spec.model, spec.model_base_url, plan.model_args, spec.deterministic)
        )
        roles = serve_roles(plan, model, stack)
        claim_run_dir(spec, plan.harness)
        # harness programs' proxies record every call under the run; sandboxed unless --no-sandbox; in
        # their small-prompt mode for the embedded model (its 8k context holds no full harness prompt)
        records = RunDir(spec.out).records
        settings = harness_settings(records, sandbox=not spec.no_sandbox, lean=model.embedded)
        stack.enter_context(settings)
        tasks = [plan.benchmark.task(seed=seed, harness=plan.harness, **plan.options) for seed in spec.seeds]
        if _display_off(display):
            display = display or "none"  # Inspect's non-terminal output would only add panels and tracebacks
            stack.enter_context(run_progress(_progress(plan, tasks)))
        failure = run_eval_set(
            tasks,
            spec.log_dir,
            model,
            epochs=spec.epochs,
            limit=spec.limit,
            max_tasks=_max_tasks(plan, model, len(tasks)),
            display=display,
            **eval_options(spec, model, roles),
        )
    try:
        if failure is not None:
            raise _stopped(plan, model.label, failure)
        return summarize_run(plan, model.label)
    finally:
        if not spec.shared_run_dir:
            make_private(RunDir(spec.out))  # what Inspect, the proxies and the summary wrote


def eval_options(spec: RunSpec, model: ResolvedModel, roles: dict[str, Any] | None) -> dict[str, Any]:
    """The `eval_set` arguments every eval of a run shares: the whole run here, or one shard on a worker."""
    generate: dict[str, Any] = {"max_retries": _MAX_RETRIES, **agent_settings(spec, model.label)}
    if spec.temperature is not None:
        generate["temperature"] = spec.temperature
    return {
        "model": model.inspect_model,
        "model_base_url": model.base_url,
        "model_args": model.model_args,
        "model_roles": roles,
        "max_connections": spec.max_connections or (2 if model.embedded else None),
        # retried by `run_eval_set`, after checking that the model still answers
        "retry_attempts": 0,
        "retry_immediate": False,
        # The embedded server marks unparseable tool calls in its raw responses; behavioral
        # analysis (format robustness) reads them, and Inspect keeps raw calls only when asked.
        "log_model_api": model.embedded,
        **generate,
    }


def run_eval_set(
    tasks: list[Task], log_dir: Path, served: ResolvedModel, **options: Any
) -> ForgeError | None:
    """`eval_set` into `log_dir`, run again (only unfinished samples) while it fails and the model still
    answers (`served`: the run's model); returns the model's failure when it stopped answering. Every
    sample attempt's cost is kept in the folder's usage ledger, whatever later retries remove."""
    for _ in range(_SEED_ATTEMPTS):
        # before eval_set's retry removes the older logs; what the last attempt left is recorded by the
        # summary (a shard's, by the summary on the driver, which reads the shard folders too)
        record_usage(log_dir)
        succeeded, _logs = eval_set(tasks, log_dir=str(log_dir), **options)
        if succeeded:
            return None
        failure = served.chat_failure()
        if failure is not None:
            return failure
    return None


def agent_settings(spec: RunSpec, model_label: str) -> dict[str, Any]:
    """Generate settings forge-eval gives the agent beyond the benchmark's own: the reply cap
    (`--max-tokens`, else an embedded model's default, so one rambling reply cannot take minutes)."""
    if spec.max_tokens is not None:
        return {"max_tokens": spec.max_tokens}
    if model_label in EMBEDDED_MODELS:
        return {"max_tokens": EMBEDDED_MODELS.get(model_label).max_reply_tokens}
    return {}


def _display_off(display: str | None) -> bool:
    """Inspect shows no progress: its display is "none", or (by default) output is not a terminal."""
    chosen = display or os.environ.get("INSPECT_DISPLAY")
    if chosen:
        return chosen.strip().lower() == "none"
    return not sys.stdout.isatty()


def _progress(plan: RunPlan, tasks: list[Task]) -> RunProgress:
    spec = plan.spec
    assert spec.epochs is not None
    per_seed = [min(len(task.dataset), spec.limit or len(task.dataset)) * spec.epochs for task in tasks]
    return RunProgress(
        plan.benchmark.name,
        total=sum(per_seed),
        done_before=finished_samples(spec.log_dir, spec.seeds),
        threshold=plan.benchmark.official.pass_threshold,
        epochs=spec.epochs,
    )


def _stopped(plan: RunPlan, model_label: str, failure: ForgeError) -> ForgeError:
    """The error that ends a run whose model stopped answering; what finished is summarized first."""
    with suppress(ForgeError):  # nothing scored yet: the logs alone are kept
        summarize_run(plan, model_label)
    kept = finished_samples(plan.spec.log_dir, plan.spec.seeds)
    return ForgeError(
        f"{failure.message}; the run stopped, {kept} finished samples are kept",
        f"{failure.hint}; then re-run the same command: it resumes where it stopped",
    )


def _max_tasks(plan: RunPlan, model: ResolvedModel, n_tasks: int) -> int:
    """Seeds run side by side, except harness programs on the embedded model: one seed at a time, so
    no more harnesses run than the run sends the model at once (max_connections). Otherwise each sample's time
    limit (wall clock) is spent queueing for the model (4 codex samples at once: 100-317 s per sample,
    32-224 s of it working), and each harness process takes CPU and memory from the model."""
    external = isinstance(HARNESSES.get(plan.harness), ExternalHarness)
    return 1 if model.embedded and external else n_tasks


def serve_roles(
    plan: RunPlan, model: ResolvedModel, stack: ExitStack, serve: ModelServing = resolved_model
) -> dict[str, Any] | None:
    """The Inspect model roles of the run: the judge and `--model-role`s, an embedded model served by
    `serve` (once per model: roles bound to the same one share its server)."""
    names = dict(plan.spec.model_roles)
    if plan.spec.judge is not None and plan.judge_role is not None:
        names[plan.judge_role] = plan.spec.judge
    served: dict[str, ResolvedModel] = {}
    roles: dict[str, Any] = {}
    for role, name in names.items():
        if name not in EMBEDDED_MODELS:
            roles[role] = name
            continue
        if model.embedded and model.label == EMBEDDED_MODELS.get(name).name:
            served[name] = model
        elif name not in served:
            served[name] = stack.enter_context(serve(name, deterministic=plan.spec.deterministic))
        roles[role] = served[name].get_model(role=role)
    return roles or None


def _judge_info(plan: RunPlan, protocol: ProtocolRecord) -> JudgeInfo | None:
    """The judge block: what identifies the judge setup, comparable only when the protocol record says
    the judge model and every judge prompt are the official ones (a benchmark's own word is not asked)."""
    judge, role = plan.spec.judge, plan.judge_role
    if judge is None or role is None:
        return None
    official = plan.benchmark.official.judge_model
    elements = protocol.of("judge_model") + protocol.of("judge_prompt")
    comparable = bool(protocol.of("judge_prompt")) and all(e.matches for e in elements)
    notes = []
    if judge != official:
        kind = "the embedded model as a smoke-test judge" if judge in EMBEDDED_MODELS else f"judge {judge}"
        notes.append(f"{kind}, not the official judge ({official or 'none declared'})")
    if not protocol.of("judge_prompt"):
        notes.append("the judge prompts are not recorded as the official ones")
    notes += [f"{e.name} differs from the official one" for e in protocol.of("judge_prompt") if not e.matches]
    note = "; ".join(notes) + ": scores are not comparable with published ones" if notes else None
    # The benchmark's own fields first: comparability comes from the protocol record alone.
    info = {k: v for k, v in plan.benchmark.judge_info(judge).items() if k not in ("comparable", "note")}
    fields = {"model": judge, "role": role, "comparable": comparable, "note": note}
    return JudgeInfo.model_validate({**info, **fields})


def _run_used(plan: RunPlan, logs: list[EvalLog], table: pd.DataFrame) -> RunUsed:
    """What the run used, read back from its newest log (every seed's task has the same arguments)."""
    newest = max(logs, key=lambda log: log.eval.created)
    config = newest.plan.config.model_dump(exclude_none=True) if newest.plan else {}
    run_level = newest.eval.model_generate_config.model_dump(exclude_none=True)
    return RunUsed(
        harness=plan.harness,
        task_args={k: v for k, v in newest.eval.task_args.items() if k != "seed"},
        sampling={k: config[k] for k in SAMPLING_KEYS if k in config},
        overrides={k: run_level[k] for k in SAMPLING_KEYS if k in run_level},
        judge_model=plan.spec.judge,
        model_roles=dict(plan.spec.model_roles),
        task_ids=tuple(sorted(str(t) for t in table["task_id"].unique())),
        skipped=dict(plan.skipped),
        data_dir=plan.spec.data_dir,
        limit=plan.spec.limit,
    )


def _protocol(plan: RunPlan, used: RunUsed) -> ProtocolRecord:
    """The benchmark's protocol record of this run; one that cannot be built is recorded as such, so a
    finished run still gets its results. The settings the run put on top of the task's own (`--temperature`,
    a reply cap: `RunUsed.overrides`) are in what the run used; the agent-sampling element says so."""
    try:
        with trees_read() as trees:
            record = plan.benchmark.protocol(used)
    except (ForgeError, OSError, ValueError) as e:
        return ProtocolRecord(pending=f"the protocol record could not be built: {e}")
    record = _with_trees(record, [*plan.trees, *trees], used.task_ids)
    if not used.overrides:
        return record
    said = ", ".join(f"{key} {value}" for key, value in used.overrides.items())
    note = f"{said}: set by this run (its options, or an embedded model's reply cap), not by the task"
    elements = [
        e.model_copy(update={"note": "; ".join(filter(None, (e.note, note)))})
        if e.element == "agent_sampling"
        else e
        for e in record.elements
    ]
    return ProtocolRecord(elements=elements, pending=record.pending)


def _with_trees(record: ProtocolRecord, trees: list[TreeCheck], task_ids: tuple[str, ...]) -> ProtocolRecord:
    """The record with one element per upstream tree the run read: the pinned commit, or the files that
    differ from it where the run reads them (`--allow-modified-tree`), which makes the run not comparable."""
    elements, seen = list(record.elements), set()
    for tree in trees:
        if tree.folder in seen:
            continue
        seen.add(tree.folder)
        changed = tree.changed(task_ids)
        pinned = f"{tree.repo}@{tree.commit[:12]}"
        ours = Value(value=pinned)
        if changed:
            label = f"{pinned} with {len(changed)} changed file(s): {tree.describe(changed)}"
            ours = Value(value={"commit": pinned, "changed": changed}, label=label)
        partial = f"a partial copy: {len(tree.missing)} files of the commit absent" if tree.missing else None
        name = f"data: {tree.repo} tree" + (f" ({tree.prefix.rstrip('/')})" if tree.prefix else "")
        elements.append(element("data", Value(value=pinned), ours, name=name, note=partial))
    return ProtocolRecord(elements=elements, pending=record.pending)


def _complete(logs: list[EvalLog], seeds: tuple[int, ...]) -> bool:
    """Every seed's newest log succeeded (a killed attempt's stale log is superseded, not counted)."""
    newest: dict[int, EvalLog] = {}
    for log in sorted(logs, key=lambda lg: lg.eval.created):
        newest[log.eval.task_args.get("seed")] = log
    return set(newest) >= set(seeds) and all(newest[seed].status == "success" for seed in seeds)


def summarize_run(plan: RunPlan, model_label: str, complete: bool | None = None) -> RunResult:
    """Read the run's logs and write results.json, trials.csv and report.html.

    `complete` is the run's status when the caller knows it (a sharded run: every shard finished);
    by default every seed's newest log must have succeeded.
    """
    spec, benchmark = plan.spec, plan.benchmark
    assert spec.epochs is not None
    logs = [log for log in read_run_logs(spec.log_dir) if log.eval.task_args.get("seed") in spec.seeds]
    if complete is None:
        complete = _complete(logs, spec.seeds)
    official = benchmark.official
    table = trials_table(logs, official.pass_threshold, metadata_keys=_METADATA_COLUMNS)
    if table.empty:
        raise ForgeError(
            f"the run produced no scored samples in {spec.log_dir}",
            hint="check the logs with `inspect view --log-dir " + str(spec.log_dir.resolve()) + "`",
        )
    metrics = summarize_trials(
        table, epochs=spec.epochs, graded=official.graded, fractional=official.fractional_success
    )
    values = {name: summary.to_dict() for name, summary in metrics.items()}
    kind = {"epochs": spec.epochs, "graded": official.graded, "fractional": official.fractional_success}
    attempts = record_usage(spec.log_dir, logs)
    values.update(benchmark.upstream_metrics(logs, values, spec.data_dir))
    n_run = int(table["task_id"].nunique())
    protocol = _protocol(plan, _run_used(plan, logs, table))
    results = RunResults.model_validate(
        {
            "benchmark": benchmark.name,
            "model": model_label,
            "harness": plan.harness,
            "seeds": list(spec.seeds),
            "epochs": spec.epochs,
            "threshold": official.pass_threshold,
            "n_tasks": n_run,
            "status": "complete" if complete else "partial",
            "versions": versions(),
            "git_revision": git_revision(),
            "command": spec.command,
            "created": datetime.now(UTC).isoformat(timespec="seconds"),
            "log_dir": RunDir.LOGS,
            "task_options": spec.task_options,
            "model_base_url": spec.model_base_url,
            "data_dir": str(spec.data_dir) if spec.data_dir else None,
            "deterministic": spec.deterministic,
            "metrics": values,
            "protocol": protocol,
            "judge": _judge_info(plan, protocol),
            "subset": SubsetInfo(
                n_total=plan.n_total,
                n_run=n_run,
                skipped=[SkippedTask(task_id=t, reason=r) for t, r in sorted(plan.skipped.items())],
            ),
            "reference": ReferenceScores(scores=dict(official.paper_scores), source=official.paper_source)
            if official.paper_scores
            else None,
            "noise_floor": noise_floor(table, **kind),
            "coverage": run_coverage(table, len(spec.seeds), spec.epochs),
            "cost": cost_summary(attempts.values(), spec.seeds),
        }
    )
    write_results(spec.out, results)
    write_trials(RunDir(spec.out).trials, table)
    _analyze_behavior(spec.out)
    errors = tuple(
        f"seed {row.seed} task {row.task_id}: {error_line(row.error)[:200]}"
        for row in table.itertuples()
        if isinstance(row.error, str) and row.error.strip()
    )
    return RunResult(spec.out, json.loads(results.model_dump_json()), build_report(spec.out), errors)


def _analyze_behavior(out: Path) -> None:
    """behavior.json, so the run's report has its Behavior section without a separate `forge-eval
    analyze`; a run whose transcripts cannot be analyzed still gets its results and report."""
    try:
        analyze_run(out)
    except ForgeError as e:
        print(f"behavior analysis skipped: {e.message}", file=sys.stderr)
