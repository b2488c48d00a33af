"""`forge-eval run --cluster`: the run's shards on an executor, merged into one run directory.

The driver checks that the cluster can run a shard (before anything is created), claims the run
directory as a local run does, keeps every shard whose log already finished, submits the others, writes
what each one returns (its logs, without a shared file system) into `logs/shards/<key>/` and records its
node and times in shards.json; the merge is `summarize_run` over the logs, the schema of a local run.
A harness matrix submits one shard set per harness (each merged into that harness's run directory) to
the same executor at once, so that the cluster spreads all of them.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from datetime import datetime

from forge_eval.models import DEFAULT_MODEL, EMBEDDED_MODELS
from forge_eval.rundir import RunDir, make_private
from forge_eval.runner._execute import RunResult, claim_run_dir, summarize_run
from forge_eval.runner._plan import RunPlan
from forge_eval.runner._shards import (
    Shard,
    plan_shards,
    read_shard_files,
    record_shards,
    shard_dir,
    shard_finished,
    shard_needs,
    write_shard_files,
)
from forge_eval.runner._worker import ShardJob, ShardOutcome
from forge_eval.runner.executors import Executor, ShardHandle


def execute_sharded(plan: RunPlan, executor: Executor, shards: int | None = None) -> RunResult:
    """Run `plan` as about `shards` shards (default: as many as the cluster runs at once, at least one
    per seed) on `executor`, then merge them; shards finished by an earlier invocation are kept."""
    [result] = execute_shard_sets([plan], executor, shards)
    return result


def execute_shard_sets(
    plans: Sequence[RunPlan], executor: Executor, shards: int | None = None
) -> list[RunResult]:
    """Run each plan (a harness of a harness matrix) as its own set of shards, all on `executor` at once
    so that the cluster spreads them, and merge each set into its plan's run directory."""
    needs = [shard_needs(plan) for plan in plans]
    for plan, need in zip(plans, needs, strict=True):
        executor.check(need, plan.benchmark.name)
    planned = [plan_shards(p, shards or executor.capacity(n)) for p, n in zip(plans, needs, strict=True)]
    for plan in plans:
        claim_run_dir(plan.spec, plan.harness)
    where = executor.where()
    handles: list[ShardHandle] = []
    owner: dict[int, RunPlan] = {}
    try:
        for plan, need, shard_set in zip(plans, needs, planned, strict=True):
            spec = plan.spec
            kept = [s for s in shard_set if shard_finished(spec.log_dir, s)]
            todo = [s for s in shard_set if s not in kept]
            label = _label(plan, len(plans))
            counts = f"{len(kept)} finished earlier, {len(todo)} to run"
            _say(f"{label}: {len(shard_set)} shards on {where}: {counts}")
            for shard in todo:
                files = {} if executor.shared else read_shard_files(shard_dir(spec.log_dir, shard))
                handle = executor.submit(ShardJob(spec, shard, executor.shared, need, files))
                owner[id(handle)] = plan
                handles.append(handle)
        while handles:
            handle, outcome = executor.wait(handles)
            handles.remove(handle)
            plan = owner[id(handle)]
            _finish(plan, RunDir(plan.spec.out), handle.job.shard, outcome, _label(plan, len(plans)))
    finally:
        for handle in handles:  # the driver was interrupted: nothing of the run is left running
            executor.cancel(handle)
        executor.close()
    return [_merge(plan, shard_set) for plan, shard_set in zip(plans, planned, strict=True)]


def _merge(plan: RunPlan, planned: list[Shard]) -> RunResult:
    spec = plan.spec
    complete = all(shard_finished(spec.log_dir, s) for s in planned)
    try:
        return summarize_run(plan, _model_label(plan), complete=complete)
    finally:
        if not spec.shared_run_dir:
            make_private(RunDir(spec.out))


def _label(plan: RunPlan, n_plans: int) -> str:
    """How progress lines name a shard set: the benchmark, and the harness when a matrix runs several."""
    return plan.benchmark.name if n_plans == 1 else f"{plan.benchmark.name} {plan.harness}"


def _finish(plan: RunPlan, run: RunDir, shard: Shard, outcome: ShardOutcome, label: str) -> None:
    """Keep what a shard returned, record where and when it ran, and say so."""
    folder = shard_dir(plan.spec.log_dir, shard)
    write_shard_files(folder, outcome.files)
    write_shard_files(run.records, outcome.records)
    finished = shard_finished(plan.spec.log_dir, shard)
    record = {
        "harness": plan.harness,
        "seed": shard.seed,
        "task_ids": list(shard.task_ids),
        "epochs": shard.epochs,
        "node": outcome.node,
        "host": outcome.host,
        "started": outcome.started,
        "ended": outcome.ended,
        "status": "finished" if finished else "unfinished",
        "error": outcome.error,
    }
    record_shards(run, {shard.key: record})
    seconds = _seconds(outcome)
    state = "finished" if finished else f"unfinished ({outcome.error or 'some samples failed'})"
    host = f" ({outcome.host})" if outcome.host and outcome.host != outcome.node else ""
    where = f"node {outcome.node[:12]}{host}"
    _say(f"{label} shard {shard.key} on {where}: {shard.samples} samples {state} in {seconds}")


def _seconds(outcome: ShardOutcome) -> str:
    try:
        started, ended = datetime.fromisoformat(outcome.started), datetime.fromisoformat(outcome.ended)
    except ValueError:
        return "?"
    return f"{(ended - started).total_seconds():.0f} s"


def _model_label(plan: RunPlan) -> str:
    """How results name the model: an Inspect model string, or the embedded model's name."""
    model = plan.spec.model
    if model is not None and model not in EMBEDDED_MODELS:
        return model
    return EMBEDDED_MODELS.get(model or DEFAULT_MODEL).name


def _say(line: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {line}", file=sys.stderr, flush=True)
