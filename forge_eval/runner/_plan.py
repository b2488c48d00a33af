"""Validate and resolve a `RunSpec` before anything is created: defaults, data, judge, model.

Every check a user can fail (unknown names, a `-T` option the benchmark's task does not take,
`--data-dir` a benchmark does not take, a missing judge, a bad model or key) runs here, so a refused
run leaves no directory behind.
"""

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from forge_eval._errors import ForgeError, UnknownNameError, UsageError
from forge_eval.benchmarks import BENCHMARKS, RUN_SET_OPTIONS, Benchmark, NothingRunnableError
from forge_eval.harnesses import HARNESSES, harness_settings
from forge_eval.models import EMBEDDED_MODELS
from forge_eval.runner._model import check_embedded_model_args, check_model
from forge_eval.runner._spec import RunSpec
from forge_eval.upstream import TreeCheck, trees_read


@dataclass(frozen=True)
class RunPlan:
    """A validated run: the spec with every default resolved, and what the benchmark told us.

    Attributes:
        spec: The spec with `epochs`, `judge` and an absolute `data_dir` filled in.
        benchmark: The benchmark object.
        harness: The harness name (the benchmark's default when none was given).
        options: Task options as passed to `Benchmark.task` (with `task_ids` for --quick and
            `data_dir` for --data-dir).
        model_args: Model arguments after `check_model` (a placeholder key for local endpoints).
        skipped: Tasks the benchmark cannot run here, task id -> reason.
        n_total: Tasks the run chose, runnable or skipped (one selection with the run's options).
        notes: What was defaulted, for the CLI to print.
        task_ids: The runnable tasks the selection chose, in its order (before `--limit`).
        blockers: Only from a dry run: why the run would stop here (missing requirements, no runnable
            task), as the errors it would raise; a dry run shows its plan first.
        trees: The upstream trees the selection read, each checked against its pinned commit.
    """

    spec: RunSpec
    benchmark: Benchmark
    harness: str
    options: dict[str, Any]
    model_args: dict[str, Any]
    skipped: dict[str, str]
    n_total: int
    notes: tuple[str, ...] = ()
    task_ids: tuple[str, ...] = ()
    blockers: tuple[ForgeError, ...] = ()
    trees: tuple[TreeCheck, ...] = ()

    @property
    def judge_role(self) -> str | None:
        return self.benchmark.official.judge_role


def plan_run(spec: RunSpec, *, dry_run: bool = False) -> RunPlan:
    """Resolve `spec` against its benchmark; raise `UsageError`/`ForgeError` on anything wrong.

    A `dry_run` contacts no model endpoint, and keeps what would stop the real run here only after its
    options were accepted (missing requirements, nothing runnable) as the plan's `blockers`, so that the
    plan can still be shown.
    """
    if not spec.seeds:
        raise UsageError("a run needs at least one seed (--seeds N with N >= 1)")
    benchmark = BENCHMARKS.get(spec.benchmark)
    harness = spec.harness or benchmark.default_harness
    HARNESSES.get(harness)
    _check_task_options(spec.task_options, benchmark)
    with harness_settings(sandbox=not spec.no_sandbox):  # a harness needs bwrap unless --no-sandbox
        missing = _missing_requirements(benchmark, harness)
    if missing is not None and not dry_run:
        raise missing
    blockers = [missing] if missing is not None else []
    notes: list[str] = []

    epochs = spec.epochs
    if epochs is None:
        epochs = benchmark.official.trials
        notes.append(
            f"epochs: {epochs} (the official trial count of {benchmark.name}; set --epochs to change)"
        )
    if epochs < 1:
        raise UsageError(f"--epochs must be >= 1, got {epochs}")
    if spec.deterministic and spec.model is not None and spec.model not in EMBEDDED_MODELS:
        raise UsageError(
            f"--deterministic is the embedded model's repeatable mode; --model {spec.model} is not embedded",
            "drop --deterministic (an external server's repeatability is its own setting, "
            "e.g. vLLM's --seed and batch-invariant kernels)",
        )
    data_dir = _data_dir(spec.data_dir, benchmark)
    judge = _judge(_role_judge(spec, benchmark), benchmark)
    roles = {r: m for r, m in spec.model_roles.items() if r != benchmark.official.judge_role}
    if judge is not None and judge != spec.judge:
        notes.append(f"judge: {judge} (the official judge of {benchmark.name}; set --judge to change)")

    model_args = dict(spec.model_args)
    if spec.model is not None and spec.model not in EMBEDDED_MODELS:
        model_args = check_model(spec.model, spec.model_base_url, model_args, "--model", contact=not dry_run)
    elif spec.model_base_url is not None:
        raise UsageError(
            "--model-base-url needs --model (an Inspect model string such as openai-api/vllm/<name>)",
            "the embedded model is started by forge-eval itself; drop --model-base-url to use it",
        )
    else:
        check_embedded_model_args(spec.model, model_args)
    if judge is not None and judge not in EMBEDDED_MODELS:
        check_model(judge, None, {}, "--judge")
    for role, name in roles.items():
        if name not in EMBEDDED_MODELS:
            check_model(name, None, {}, f"--model-role {role}")

    options = _task_options(spec, benchmark)
    # One selection, with the task's own options, gives the skipped tasks and the count of chosen ones.
    with trees_read() as trees:
        selection = benchmark.selection(data_dir, **{k: v for k, v in options.items() if k != "data_dir"})
    try:
        selection.runnable(benchmark.name)  # nothing can run here: stop before anything is created
    except NothingRunnableError as e:
        if not dry_run:
            raise
        blockers.append(e)
    resolved = replace(spec, epochs=epochs, judge=judge, model_roles=roles, data_dir=data_dir)
    skipped, n_total = dict(selection.skipped), selection.n_total
    task_ids = tuple(str(s.id) for s in selection.samples)
    modified = _modified_tree(trees, task_ids, spec.allow_modified_tree)
    if modified is not None and not dry_run:
        raise modified
    blockers += [modified] if modified is not None else []
    return RunPlan(
        resolved,
        benchmark,
        harness,
        options,
        model_args,
        skipped,
        n_total,
        tuple(notes),
        task_ids,
        tuple(blockers),
        tuple(trees),
    )


def _modified_tree(trees: list[TreeCheck], task_ids: tuple[str, ...], allowed: bool) -> UsageError | None:
    """An upstream tree whose files differ from the pinned commit's where the run reads them is refused:
    its results would be recorded as upstream's benchmark when they are not."""
    for tree in trees:
        changed = tree.changed(task_ids)
        if changed and not allowed:
            return UsageError(
                f"{tree.folder} is not {tree.repo} at the pinned commit {tree.commit[:12]}: "
                f"{len(changed)} file(s) this run reads differ: {tree.describe(changed)}",
                "use a copy of the pinned commit, or pass --allow-modified-tree to run on it anyway "
                "(the protocol record then names the files and the run is not comparable)",
            )
    return None


def _missing_requirements(benchmark: Benchmark, harness_name: str) -> ForgeError | None:
    """What the run lacks here as the error it raises; None when nothing is missing."""
    try:
        missing = benchmark.requirements() + HARNESSES.get(harness_name).requirements()
    except ForgeError as e:  # a benchmark that names what is missing in its own error (the live web)
        return e
    if not missing:
        return None
    return ForgeError(
        f"cannot run '{benchmark.name}' with harness '{harness_name}' here:\n  - " + "\n  - ".join(missing)
    )


def _check_task_options(options: dict[str, Any], benchmark: Benchmark) -> None:
    """Refuse a `-T` option the benchmark's task function does not take (or one the run sets itself):
    the function would raise a TypeError only once the run directory exists."""
    for key, flag in RUN_SET_OPTIONS.items():
        if key in options:
            raise UsageError(f"-T {key}: the run sets each task's {key}; use {flag} instead")
    valid = benchmark.task_options()
    unknown = [key for key in options if valid is not None and key not in valid]
    if unknown:
        raise UnknownNameError(f"{benchmark.name} task option", unknown[0], valid or [])


def _data_dir(data_dir: Path | None, benchmark: Benchmark) -> Path | None:
    if data_dir is None:
        return None
    if not benchmark.accepts_data_dir:
        raise UsageError(
            f"benchmark '{benchmark.name}' reads no external task data; --data-dir {data_dir} does not apply",
            "drop --data-dir",
        )
    if not data_dir.is_dir():
        what = "is not a directory" if data_dir.exists() else "does not exist"
        raise UsageError(
            f"--data-dir {data_dir} {what}", f"point it at a local copy of {benchmark.name}'s task data"
        )
    return data_dir.resolve()


def _role_judge(spec: RunSpec, benchmark: Benchmark) -> str | None:
    """`--judge`, or `--model-role` naming the benchmark's judge role (Inspect's way to bind it)."""
    role = benchmark.official.judge_role
    bound = spec.model_roles.get(role) if role is not None else None
    if bound is not None and spec.judge is not None and bound != spec.judge:
        raise UsageError(
            f"--judge {spec.judge} and --model-role {role}={bound} bind the judge to two models",
            "pass one of them",
        )
    return spec.judge or bound


def _judge(judge: str | None, benchmark: Benchmark) -> str | None:
    """The judge model of the run: `--judge`, else the official judge; None without a judge role."""
    official = benchmark.official
    if official.judge_role is None:
        if judge is not None:
            raise UsageError(
                f"benchmark '{benchmark.name}' scores without an LLM judge; drop --judge {judge}"
            )
        return None
    if judge is None and official.judge_model is None:
        raise UsageError(
            f"benchmark '{benchmark.name}' scores with an LLM judge and declares no official one",
            "pass --judge MODEL (an Inspect model string or an embedded model name)",
        )
    return judge or official.judge_model


def _task_options(spec: RunSpec, benchmark: Benchmark) -> dict[str, Any]:
    options = dict(spec.task_options)
    if spec.quick:
        if benchmark.quick_subset is None:
            raise UsageError(f"benchmark '{benchmark.name}' has no quick subset; drop --quick")
        options["task_ids"] = ",".join(benchmark.quick_subset)
    if spec.data_dir is not None:
        options["data_dir"] = str(spec.data_dir.resolve())
    return options
