"""`RayExecutor` (`--cluster ray://HOST:PORT`, `ray:auto`, `ray:GCS_HOST:PORT`): each shard a Ray task.

A shard asks for one CPU and one slot of each custom resource a sample needs (`browser`, `desktop`,
`sandbox`: nodes advertise them with `ray start --resources`), so it only lands where its environment
can run; a cluster with no such node is refused before anything starts. A task whose node is lost is
retried elsewhere by Ray (`max_retries`), and the lost node's worker ends itself and what it started
(`follow_parent`); the retry's eval resumes from what the lost attempt left in a shared
run directory, and the merge keeps one sample per (seed, task, epoch). Workers import forge-eval from
their own environment (the same version on every node: an image or a `runtime_env`).
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from forge_eval._errors import ForgeError
from forge_eval.runner._worker import ShardJob, ShardOutcome, run_shard
from forge_eval.runner.executors._executor import Executor, ShardHandle
from forge_eval.runner.executors._lifeline import follow_parent

#: Tries of a shard whose worker or node is lost (Ray's own retry of system failures).
MAX_RETRIES = 3


def _ray_shard(job: ShardJob) -> ShardOutcome:
    """The Ray task: the shard, with the Ray node that ran it; it ends with its node's raylet."""
    import ray  # optional dependency (the `ray` extra)

    follow_parent()
    outcome = run_shard(job)
    return dataclasses.replace(outcome, node=ray.get_runtime_context().get_node_id())


class RayExecutor(Executor):
    """Shards as Ray tasks on the cluster at `address` (`auto`, `ray://HOST:PORT` or a GCS `HOST:PORT`)."""

    name = "ray"
    schemes = ("ray",)
    forms = ("ray://HOST:PORT", "ray:auto")

    def __init__(self, address: str, shared: bool = False, max_retries: int = MAX_RETRIES) -> None:
        import ray  # optional dependency (the `ray` extra)

        super().__init__(address, shared)
        self.max_retries = max_retries
        self._owns = not ray.is_initialized()
        if self._owns:
            try:
                ray.init(address=address, logging_level=logging.WARNING, log_to_driver=False)
            except (ConnectionError, RuntimeError, ValueError) as e:
                raise ForgeError(
                    f"cannot reach the Ray cluster at {address}: {str(e).splitlines()[0]}",
                    "start it (`ray start --head`) or pass its address: --cluster ray://HOST:10001",
                ) from None
        self._remote = ray.remote(_ray_shard)

    def check(self, needs: Mapping[str, float], benchmark: str) -> None:
        nodes = _alive_nodes()
        if any(_fits(node, needs) for node in nodes):
            return
        totals: dict[str, float] = {}
        for node in nodes:
            for name, amount in node.items():
                totals[name] = max(totals.get(name, 0.0), amount)
        missing = [name for name, amount in needs.items() if totals.get(name, 0.0) < amount]
        if missing:
            what = missing[0]
            raise ForgeError(
                f"no node of the Ray cluster at {self.address} offers '{what}', which a {benchmark} "
                f"sample needs ({_describe(needs)})",
                f"start a node that has it: ray start --address HEAD:6379 --resources '{{\"{what}\": 1}}'"
                if what != "CPU"
                else "add a node with CPUs",
            )
        raise ForgeError(
            f"no single node of the Ray cluster at {self.address} offers all of {_describe(needs)}, "
            f"which one {benchmark} sample needs",
            "start a node that advertises all of them (ray start --resources)",
        )

    def capacity(self, needs: Mapping[str, float]) -> int:
        slots = (min(int(node.get(k, 0.0) // v) for k, v in needs.items()) for node in _alive_nodes())
        return max(1, sum(slots))

    def submit(self, job: ShardJob) -> ShardHandle:
        needs = dict(job.needs)
        options: dict[str, Any] = {
            "num_cpus": needs.pop("CPU", 1.0),
            "resources": needs,
            "max_retries": self.max_retries,
            "retry_exceptions": False,
            "name": f"forge-eval shard {job.shard.key}",
        }
        return ShardHandle(job, self._remote.options(**options).remote(job))

    def wait(self, handles: Sequence[ShardHandle]) -> tuple[ShardHandle, ShardOutcome]:
        import ray  # optional dependency (the `ray` extra)

        by_ref = {handle.ref: handle for handle in handles}
        ready, _ = ray.wait(list(by_ref), num_returns=1)
        handle = by_ref[ready[0]]
        try:
            return handle, ray.get(ready[0])
        except ray.exceptions.RayError as e:
            now = datetime.now(UTC).isoformat(timespec="seconds")
            message = f"the shard's Ray task failed: {str(e).strip().splitlines()[0]}"
            return handle, ShardOutcome(handle.job.shard.key, "", "", now, now, message)

    def cancel(self, handle: ShardHandle) -> None:
        import ray  # optional dependency (the `ray` extra)

        ray.cancel(handle.ref, force=True, recursive=True)

    def close(self) -> None:
        import ray  # optional dependency (the `ray` extra)

        if self._owns:
            ray.shutdown()


def _alive_nodes() -> list[dict[str, float]]:
    import ray  # optional dependency (the `ray` extra)

    return [dict(node["Resources"]) for node in ray.nodes() if node.get("Alive")]


def _fits(node: Mapping[str, float], needs: Mapping[str, float]) -> bool:
    return all(node.get(name, 0.0) >= amount for name, amount in needs.items())


def _describe(needs: Mapping[str, float]) -> str:
    return ", ".join(f"{name} {amount:g}" for name, amount in needs.items())
