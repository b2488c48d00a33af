"""A harness matrix: `forge-eval run BENCH --harness react,codex,...` runs the same tasks and seeds under
each harness and compares them, in one run directory.

Each harness gets a run of its own in `OUT/harnesses/<name>/`, the schema of a single-harness run (logs,
records, results.json, trials.csv, report), planned with every check before anything is created (an
unknown harness is refused with the valid names, nothing written). Here they run one after another; on a
cluster each is one shard set and all sets go to the executor at once, so the cluster spreads them.
`OUT/results.json` is the first harness's results (the baseline: `forge-eval compare` reads OUT as that
run) plus a `harnesses` section (`harness_matrix`) and the cost of every harness and in total;
`OUT/run.json` names the matrix, so a re-run of the same command resumes every harness, and another run
in OUT is refused.
"""

import json
import shutil
from dataclasses import dataclass, replace

from forge_eval._errors import UsageError
from forge_eval.analysis import cost_summary, harness_matrix, load_harness_run
from forge_eval.harnesses import HARNESSES
from forge_eval.reports import build_report
from forge_eval.rundir import RunDir, RunResults, make_private, read_usage_ledger, write_results
from forge_eval.runner._execute import RunResult, claim_run_dir, execute
from forge_eval.runner._plan import RunPlan, plan_run
from forge_eval.runner._sharded import execute_shard_sets
from forge_eval.runner._spec import RunSpec
from forge_eval.runner.executors import Executor


def harness_names(text: str | None) -> tuple[str, ...]:
    """`"react,codex"` -> ("react", "codex"); `None` -> () (the benchmark's own harness). Each name must be
    registered (the error lists the valid ones) and appear once."""
    if text is None:
        return ()
    names = tuple(part.strip() for part in text.split(","))
    valid = [name for name, _ in HARNESSES.items()]
    if not all(names):
        raise UsageError(
            f"--harness {text!r} has an empty name", f"separate harness names by commas: {', '.join(valid)}"
        )
    for name in names:
        HARNESSES.get(name)  # UnknownNameError: lists the valid harnesses
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise UsageError(f"--harness {text!r} names {', '.join(repeated)} more than once", "name each once")
    return names


@dataclass(frozen=True)
class MatrixPlan:
    """A validated harness matrix.

    Attributes:
        spec: The matrix's own spec: `out` is the matrix directory, `harness` the names joined by commas.
        plans: One validated run per harness, the baseline first, each in `out/harnesses/<name>/`.
    """

    spec: RunSpec
    plans: tuple[RunPlan, ...]

    @property
    def harnesses(self) -> tuple[str, ...]:
        return tuple(plan.harness for plan in self.plans)

    @property
    def notes(self) -> tuple[str, ...]:
        """What was defaulted, once (every harness's plan says the same)."""
        return tuple(dict.fromkeys(note for plan in self.plans for note in plan.notes))


def plan_matrix(spec: RunSpec, harnesses: tuple[str, ...]) -> MatrixPlan:
    """Plan one run per harness in `spec.out/harnesses/<name>/`; nothing is created."""
    if len(harnesses) < 2:
        raise UsageError("a harness matrix needs at least two harnesses", "e.g. --harness react,codex")
    root = RunDir(spec.out).harnesses
    plans = tuple(plan_run(replace(spec, harness=name, out=root / name)) for name in harnesses)
    return MatrixPlan(replace(spec, harness=",".join(harnesses)), plans)


def execute_matrix(
    matrix: MatrixPlan,
    executor: Executor | None = None,
    shards: int | None = None,
    budgets: tuple[int, ...] = (),
    display: str | None = None,
) -> RunResult:
    """Run every harness of `matrix` (on `executor`'s cluster, else here one after another), then write
    the matrix's results.json (the baseline's, with the `harnesses` section), trials.csv and report.

    Args:
        matrix: The plan (`plan_matrix`).
        executor: Where the shard sets run; None runs each harness in this process.
        shards: About how many shards per harness (with an executor).
        budgets: Step budgets for the paired differences; default: each harness's median model turns.
        display: Inspect's display for runs in this process.
    """
    spec = matrix.spec
    claim_run_dir(spec, spec.harness or "", logs=False)  # refuses another run in OUT before anything runs
    if executor is not None:
        runs = execute_shard_sets(matrix.plans, executor, shards)
    else:
        runs = [execute(plan, display) for plan in matrix.plans]
    try:
        return summarize_matrix(matrix, runs, budgets)
    finally:
        if not spec.shared_run_dir:
            make_private(RunDir(spec.out))


def summarize_matrix(matrix: MatrixPlan, runs: list[RunResult], budgets: tuple[int, ...] = ()) -> RunResult:
    """Write OUT/results.json (the baseline harness's results with the `harnesses` section), OUT/trials.csv
    (the baseline's) and OUT/report.html from the harnesses' finished runs."""
    out = RunDir(matrix.spec.out)
    loaded = [load_harness_run(plan.harness, run.out) for plan, run in zip(matrix.plans, runs, strict=True)]
    section = harness_matrix(loaded, budgets=budgets, root=out.path)
    baseline = runs[0]
    complete = all(run.complete for run in runs)
    results = RunResults.model_validate(
        {
            **baseline.results,
            "status": "complete" if complete else "partial",
            "command": matrix.spec.command,
            "log_dir": (RunDir(baseline.out).logs.relative_to(out.path)).as_posix(),
            "harnesses": section,
            # what the whole matrix cost, per harness and in total (each harness's own file has its own)
            "cost": cost_summary(
                [row for run in runs for row in read_usage_ledger(RunDir(run.out).logs).values()],
                matrix.spec.seeds,
            ),
        }
    )
    write_results(out.path, results)
    shutil.copyfile(RunDir(baseline.out).trials, out.trials)
    errors = tuple(
        f"{plan.harness}: {e}" for plan, run in zip(matrix.plans, runs, strict=True) for e in run.errors
    )
    return RunResult(out.path, json.loads(results.model_dump_json()), build_report(out.path), errors)
