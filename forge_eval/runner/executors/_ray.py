"""`RayExecutor` (`--cluster ray://HOST:PORT`, `ray:auto`, `ray:GCS_HOST:PORT`): each shard a Ray task.

A shard asks for one CPU and one slot of each custom resource a sample needs (`browser`, `desktop`,
`sandbox`: nodes advertise them with `ray start --resources`), so it only lands where its environment
can run; a cluster with no such node is refused before anything starts. A task whose node is lost is
retried elsewhere by Ray (`max_retries`), and the lost node's worker ends itself and what it started
(`follow_parent`); the retry's eval resumes from what the lost attempt left in a shared
run directory, and the merge keeps one sample per (seed, task, epoch). Workers import forge-eval from
their own environment (the same version on every node: an image or a `runtime_env`).

The embedded model is served once per node, as on one machine: when a run serves one, the driver places a
`NodeModels` actor on each node, which starts a model's server on the node's loopback at its first use and
serves every shard of the run that lands there (never reachable from another node); the actors end with
the run.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager, suppress
from datetime import UTC, datetime
from typing import Any

from forge_eval._errors import ForgeError
from forge_eval.models import EMBEDDED_MODELS
from forge_eval.runner._model import ModelServing, ResolvedModel, resolved_model
from forge_eval.runner._worker import ShardJob, ShardOutcome, run_shard
from forge_eval.runner.executors._executor import Executor, ShardHandle
from forge_eval.runner.executors._lifeline import follow_parent

#: Tries of a shard whose worker or node is lost (Ray's own retry of system failures).
MAX_RETRIES = 3
#: The name of a node's `NodeModels` actor.
NODE_MODELS = "forge-eval models on {node}"
#: Seconds a node's actor may take to stop its servers when the run ends.
STOP_TIMEOUT_S = 60.0


class NodeModels:
    """A Ray actor on one node: the embedded model servers of the run's shards there, each started at its
    first use, on the node's loopback, and kept until the run ends (`stop`)."""

    def __init__(self) -> None:
        follow_parent()  # a lost node's servers end with its raylet
        self._stack = ExitStack()
        self._served: dict[tuple[str, bool], ResolvedModel] = {}

    def serve(self, model: str | None, deterministic: bool) -> ResolvedModel:
        key = (EMBEDDED_MODELS.get(model).name if model else "", deterministic)
        if key not in self._served:
            self._served[key] = self._stack.enter_context(resolved_model(model, deterministic=deterministic))
        return self._served[key]

    def started(self) -> int:
        """How many servers this node started."""
        return len(self._served)

    def stop(self) -> None:
        self._stack.close()
        self._served.clear()


def _node_serving(node: str) -> ModelServing:
    """How a shard on `node` gets its models: an embedded one from the node's `NodeModels` actor (its own
    server when the node has none: it joined after the run started), any other as `resolved_model`."""
    import ray  # optional dependency (the `ray` extra)

    try:
        models = ray.get_actor(NODE_MODELS.format(node=node))
    except ValueError:
        return resolved_model

    @contextmanager
    def serve(
        model: str | None,
        base_url: str | None = None,
        model_args: dict[str, Any] | None = None,
        deterministic: bool = False,
    ) -> Iterator[ResolvedModel]:
        if model is not None and model not in EMBEDDED_MODELS:
            with resolved_model(model, base_url, model_args, deterministic) as resolved:
                yield resolved
            return
        served = ray.get(models.serve.remote(model, deterministic))
        yield dataclasses.replace(served, model_args={**served.model_args, **(model_args or {})})

    return serve


def _ray_shard(job: ShardJob) -> ShardOutcome:
    """The Ray task: the shard, with the Ray node that ran it; it ends with its node's raylet."""
    import ray  # optional dependency (the `ray` extra)

    follow_parent()
    node = ray.get_runtime_context().get_node_id()
    return dataclasses.replace(run_shard(job, _node_serving(node)), node=node)


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
        self._node_models = ray.remote(NodeModels)
        self._models: dict[str, Any] = {}

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

    def _place_node_models(self) -> None:
        """A `NodeModels` actor on every alive node that has none yet (it takes no CPU)."""
        import ray  # optional dependency (the `ray` extra)
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy  # optional (`ray` extra)

        for node in ray.nodes():
            node_id = node["NodeID"]
            if node.get("Alive") and node_id not in self._models:
                self._models[node_id] = self._node_models.options(
                    name=NODE_MODELS.format(node=node_id),
                    num_cpus=0,
                    scheduling_strategy=NodeAffinitySchedulingStrategy(node_id, soft=False),
                ).remote()

    def submit(self, job: ShardJob) -> ShardHandle:
        if _serves_embedded(job):
            self._place_node_models()
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

        for actor in self._models.values():
            # a lost node's actor is gone, and its servers with it (`follow_parent`)
            with suppress(ray.exceptions.RayError):
                ray.get(actor.stop.remote(), timeout=STOP_TIMEOUT_S)
            ray.kill(actor)
        self._models.clear()
        if self._owns:
            ray.shutdown()


def _serves_embedded(job: ShardJob) -> bool:
    """Whether the shard serves an embedded model (its model, judge or another role): only then does a
    node need a `NodeModels` actor, a worker process of its own that a run against an endpoint would pay
    for on every node."""
    spec = job.spec
    names = [spec.model, spec.judge, *spec.model_roles.values()]
    return spec.model is None or any(name in EMBEDDED_MODELS for name in names if name is not None)


def _alive_nodes() -> list[dict[str, float]]:
    import ray  # optional dependency (the `ray` extra)

    return [dict(node["Resources"]) for node in ray.nodes() if node.get("Alive")]


def _fits(node: Mapping[str, float], needs: Mapping[str, float]) -> bool:
    return all(node.get(name, 0.0) >= amount for name, amount in needs.items())


def _describe(needs: Mapping[str, float]) -> str:
    return ", ".join(f"{name} {amount:g}" for name, amount in needs.items())
