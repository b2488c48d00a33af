"""`forge-eval run --dry-run`: what a run would do, planned as the run plans it, with nothing started.

The plan is `plan_run`'s (the same checks, so bad options give the same errors; no model endpoint is
contacted), the tasks are its one selection, the shards are `plan_shards`' on the executor `--cluster`
names (checked and asked how many shards it runs at once, as the run does, when `--shards` is not given).
No model, proxy, desktop or sandbox starts and no run directory is created: an existing one is only read,
to refuse a different run in it and to count what an earlier invocation finished.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from forge_eval.benchmarks import reason_counts
from forge_eval.models import DEFAULT_MODEL, EMBEDDED_MODELS
from forge_eval.runner._execute import _previous_seeds
from forge_eval.runner._plan import RunPlan, plan_run
from forge_eval.runner._progress import finished_samples
from forge_eval.runner._shards import Shard, plan_shards, shard_finished, shard_needs
from forge_eval.runner._spec import RunSpec
from forge_eval.runner.executors import executor_for


@dataclass(frozen=True)
class ShardPlan:
    """The shards a run on a cluster would submit.

    Attributes:
        cluster: `--cluster` as given.
        where: The cluster in words (`Executor.where`).
        shards: The planned shards, in submission order.
        finished: Keys of the shards an earlier invocation finished (kept, not run again).
    """

    cluster: str
    where: str
    shards: tuple[Shard, ...]
    finished: frozenset[str] = frozenset()


@dataclass(frozen=True)
class DryRun:
    """A run's plan, as `forge-eval run --dry-run` shows it.

    Attributes:
        plan: The validated plan (`plan_run(spec, dry_run=True)`); its `blockers` say why the real
            run would stop here.
        task_ids: The tasks each seed would run (the first `--limit` runnable ones), in order.
        beyond_limit: Runnable tasks left out by `--limit`.
        out_exists: Whether the run directory exists (an earlier invocation's run, resumed).
        finished_before: Samples an earlier invocation finished (a resumed run skips them).
        shards: The shard plan with `--cluster`, else None (one in-process run of all seeds).
    """

    plan: RunPlan
    task_ids: tuple[str, ...]
    beyond_limit: tuple[str, ...]
    out_exists: bool
    finished_before: int
    shards: ShardPlan | None = None

    @property
    def epochs(self) -> int:
        assert self.plan.spec.epochs is not None  # plan_run resolves it
        return self.plan.spec.epochs

    @property
    def samples(self) -> int:
        """Samples over all seeds and epochs, finished ones included."""
        return len(self.plan.spec.seeds) * len(self.task_ids) * self.epochs

    @property
    def model(self) -> str:
        """The agent's model in words: where it comes from, and that it is not contacted."""
        spec = self.plan.spec
        if spec.model is None or spec.model in EMBEDDED_MODELS:
            name = EMBEDDED_MODELS.get(spec.model or DEFAULT_MODEL).name
            return f"{name} (embedded: the run starts it here)"
        where = f" at {spec.model_base_url}" if spec.model_base_url else ""
        return f"{spec.model}{where} (not contacted by a dry run)"

    def to_dict(self) -> dict[str, Any]:
        """The plan as JSON data (`--dry-run --json`)."""
        plan, spec = self.plan, self.plan.spec
        shards = None
        if self.shards is not None:
            shards = {
                "cluster": self.shards.cluster,
                "where": self.shards.where,
                "shards": [
                    {**s.to_dict(), "samples": s.samples, "finished": s.key in self.shards.finished}
                    for s in self.shards.shards
                ],
            }
        return {
            "benchmark": plan.benchmark.name,
            "harness": plan.harness,
            "model": spec.model,
            "model_base_url": spec.model_base_url,
            "judge": spec.judge,
            "model_roles": dict(spec.model_roles),
            "task_options": plan.options,
            "seeds": [
                {"seed": seed, "task_ids": list(self.task_ids), "epochs": self.epochs} for seed in spec.seeds
            ],
            "epochs": self.epochs,
            "limit": spec.limit,
            "n_chosen": plan.n_total,
            "task_ids": list(self.task_ids),
            "beyond_limit": list(self.beyond_limit),
            "skipped": dict(plan.skipped),
            "skipped_by_reason": dict(reason_counts(plan.skipped)),
            "samples": self.samples,
            "out": str(spec.out),
            "out_exists": self.out_exists,
            "finished_before": self.finished_before,
            "shards": shards,
            "notes": list(plan.notes),
            "would_run": not plan.blockers,
            "blockers": [
                {"message": b.message, "hint": b.hint, "exit_code": b.exit_code} for b in plan.blockers
            ],
        }


def dry_run(
    spec: RunSpec, cluster: str | None = None, shards: int | None = None, shared: bool = False
) -> DryRun:
    """Plan `spec` as `forge-eval run` would (on `cluster` in about `shards` shards), starting nothing."""
    plan = plan_run(spec, dry_run=True)
    _previous_seeds(spec, plan.harness)  # a different run in --out: the real run's error
    limit = spec.limit or len(plan.task_ids)
    task_ids, beyond = plan.task_ids[:limit], plan.task_ids[limit:]
    shard_plan = _shard_plan(plan, cluster, shards, shared) if cluster and task_ids else None
    finished = 0
    if spec.out.is_dir():
        finished = finished_samples(spec.log_dir, spec.seeds)
    return DryRun(plan, task_ids, beyond, spec.out.is_dir(), finished, shard_plan)


def _shard_plan(plan: RunPlan, cluster: str, shards: int | None, shared: bool) -> ShardPlan:
    """The shards `execute_sharded` would plan: the executor is connected and checked as there, and
    asked its capacity only when `shards` is not given; nothing is submitted."""
    executor = executor_for(cluster, shared)
    try:
        needs = shard_needs(plan)
        executor.check(needs, plan.benchmark.name)
        planned = tuple(plan_shards(plan, shards or executor.capacity(needs)))
        where = executor.where()
    finally:
        executor.close()
    log_dir = plan.spec.log_dir
    finished = frozenset(s.key for s in planned if log_dir.is_dir() and shard_finished(log_dir, s))
    return ShardPlan(cluster, where, planned, finished)
