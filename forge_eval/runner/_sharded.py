"""`forge-eval run --cluster`: the run's shards on an executor, merged into one run directory.

The driver checks that the cluster can run a shard (before anything is created), claims the run
directory as a local run does, keeps every shard whose log already finished, submits the others, writes
what each one returns (its logs, without a shared file system) into `logs/shards/<key>/` and records its
node and times in shards.json; the merge is `summarize_run` over the logs, the schema of a local run.
"""

from __future__ import annotations

import sys
import time
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
    spec, name = plan.spec, plan.benchmark.name
    needs = shard_needs(plan)
    executor.check(needs, name)
    planned = plan_shards(plan, shards or executor.capacity(needs))
    claim_run_dir(spec, plan.harness)
    run = RunDir(spec.out)
    kept = [s for s in planned if shard_finished(spec.log_dir, s)]
    todo = [s for s in planned if s not in kept]
    where = executor.where()
    _say(f"{name}: {len(planned)} shards on {where}: {len(kept)} finished earlier, {len(todo)} to run")
    handles: list[ShardHandle] = []
    try:
        for shard in todo:
            files = {} if executor.shared else read_shard_files(shard_dir(spec.log_dir, shard))
            handles.append(executor.submit(ShardJob(spec, shard, executor.shared, needs, files)))
        while handles:
            handle, outcome = executor.wait(handles)
            handles.remove(handle)
            _finish(plan, run, handle.job.shard, outcome)
    finally:
        for handle in handles:  # the driver was interrupted: nothing of the run is left running
            executor.cancel(handle)
        executor.close()
    complete = all(shard_finished(spec.log_dir, s) for s in planned)
    try:
        return summarize_run(plan, _model_label(plan), complete=complete)
    finally:
        if not spec.shared_run_dir:
            make_private(run)


def _finish(plan: RunPlan, run: RunDir, shard: Shard, outcome: ShardOutcome) -> None:
    """Keep what a shard returned, record where and when it ran, and say so."""
    folder = shard_dir(plan.spec.log_dir, shard)
    write_shard_files(folder, outcome.files)
    write_shard_files(run.records, outcome.records)
    finished = shard_finished(plan.spec.log_dir, shard)
    record = {
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
    _say(f"{plan.benchmark.name} shard {shard.key} on {where}: {shard.samples} samples {state} in {seconds}")


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
