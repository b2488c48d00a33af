"""`RayBackend` (`ray`): each rollout in a Ray actor of its own, on a node that has the harness's resources.

The actor runs the `local` backend there (one bubblewrap sandbox, `LocalBackend` itself, not a copy): the
sandbox's loopback port 18080 is forwarded to the proxy's data plane at `spec.proxy_base_url`, which must
be an address the workers reach (the proxy's control plane stays on the trainer's loopback, so no
sandbox, and no worker, can reach it). Nodes advertise what they can run (`ray start --resources='{"sandbox":
4}'`); a rollout asks for `resources` (default one `sandbox` slot) and `num_cpus`, so Ray's scheduler, not
ours, bounds how many run on a node. A rollout no alive node could ever hold fails at `start()`, naming
the resource, instead of waiting forever in Ray's queue.

The rollout program runs in the actor, on the sandbox's node: a `RolloutCommand` holds live callables
(`verify`, `cleanup`) over the task's environment (a world on disk, a tool server the sandbox reaches
through a forward on its node's loopback), the verifier reads the sandbox's work directory, and none of it
can cross machines. Only the `RolloutSpec` goes out and the `RolloutOutcome` (verdict included) comes back,
over Ray's own channel, which the sandbox cannot reach: the grade is trusted as on the local backend.

A lost node (raylet, worker process) ends the rollout `evicted`; its sandbox ends with the actor, which
ends itself when its raylet is gone (bubblewrap's `--die-with-parent` covers a killed actor). The actor
belongs to the trainer's process (not detached), so a trainer that dies takes its actors and their
sandboxes along.
"""

import asyncio
import contextlib
import functools
import ipaddress
import json
import logging
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any
from urllib.parse import urlsplit

from forge_eval._errors import ForgeError, UsageError
from forge_eval.sandbox import RolloutOutcome, RolloutProgram, RolloutSpec, SandboxLimits
from forge_eval.training.backends._backend import RolloutBackend, RolloutHandle
from forge_eval.training.backends._local import LocalBackend
from forge_eval.training.rollouts import default_program

logger = logging.getLogger(__name__)

_LOGS_TIMEOUT_S = 10.0
_LIFELINE_S = 0.5


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _node_ip() -> str:
    import ray  # optional dependency (the `ray` extra)

    return ray.util.get_node_ip_address()


class RolloutActor:
    """One rollout on its Ray node: the local backend's sandbox, program, verifier and cleanup, all here.

    Made a Ray actor by `RayBackend` (`ray.remote` at use, so importing this module needs no Ray).
    """

    def __init__(self, program: RolloutProgram, options: dict[str, Any]) -> None:
        self.backend = LocalBackend(program, max_concurrent=1, **options)
        self.handle: RolloutHandle | None = None
        self._lifeline: asyncio.Task[None] | None = None

    async def _follow_raylet(self, raylet: int) -> None:
        """End the sandbox and this process once the raylet (its parent) is gone: Ray leaves a worker
        running when its raylet is killed and not reaped, and the trainer has already counted the rollout
        `evicted`, so the sandbox would run on unwatched."""
        while os.getppid() == raylet:
            await asyncio.sleep(_LIFELINE_S)
        try:
            await asyncio.wait_for(self.stop(), _LOGS_TIMEOUT_S)
        finally:
            os._exit(1)

    async def start(self, spec: RolloutSpec, trainer_ip: str) -> str:
        """Start the sandbox; returns this node's id."""
        import ray  # optional dependency (the `ray` extra)

        host = urlsplit(spec.proxy_base_url).hostname or ""
        here = _node_ip()
        if _is_loopback(host) and here != trainer_ip:
            raise UsageError(
                f"rollout {spec.rollout_id} runs on node {here}, but the proxy URL {spec.proxy_base_url} is "
                f"on the trainer's loopback ({trainer_ip}), which that node cannot reach",
                hint="serve the proxy's data plane on the trainer's cluster address (forge-eval proxy serve "
                "--host <ip>) and set proxy_url to it in agent_loops.yaml",
            )
        self._lifeline = asyncio.get_running_loop().create_task(self._follow_raylet(os.getppid()))
        self.handle = await self.backend.start(spec)
        return ray.get_runtime_context().get_node_id()

    async def wait(self, remaining_s: float) -> RolloutOutcome:
        # the trainer sends the time left, not its clock's deadline: the nodes' clocks may differ
        assert self.handle is not None
        return await self.backend.wait(self.handle, time.time() + remaining_s)

    async def logs(self) -> str:
        return await self.backend.logs(self.handle) if self.handle is not None else ""

    async def stop(self) -> str:
        """Stop the sandbox; returns its output, which the trainer can still read once this actor is gone."""
        if self.handle is not None:
            await self.backend.stop(self.handle)
        return await self.logs()


@functools.cache
def _actor_class() -> Any:
    """`RolloutActor` as a Ray actor class, made once per process (Ray exports it to the nodes)."""
    import ray  # optional dependency (the `ray` extra)

    return ray.remote(RolloutActor)


@dataclass
class _Actor:
    actor: Any  # ray.actor.ActorHandle
    node: str = "?"
    lost: bool = False
    stopped: bool = False
    final_logs: str | None = None  # the output `stop` brought back before the actor was killed


def _need_text(need: Mapping[str, float]) -> str:
    return json.dumps({k: (int(v) if float(v).is_integer() else v) for k, v in need.items()})


def check_feasible(nodes: list[dict[str, Any]], need: Mapping[str, float], rollout_id: str) -> None:
    """Raise unless some alive node of `nodes` (`ray.nodes()`) has all of `need`: Ray would otherwise
    queue the actor forever, printing warnings nobody on the trainer reads."""
    alive = [n.get("Resources") or {} for n in nodes if n.get("Alive")]
    if any(all(res.get(k, 0.0) >= v for k, v in need.items()) for res in alive):
        return
    lacking = [k for k, v in need.items() if not any(res.get(k, 0.0) >= v for res in alive)]
    which = (
        f"no node has {', '.join(f'{k}={need[k]:g}' for k in lacking)}"
        if lacking
        else "no single node has all of them"
    )
    raise ForgeError(
        f"rollout {rollout_id} needs {_need_text(need)} on one node of the Ray cluster, and {which} "
        f"({len(alive)} node(s) alive)",
        hint="start worker nodes that advertise it (e.g. ray start --address=<head> "
        "--resources='{\"sandbox\": 4}'), or change the ray backend's resources / num_cpus",
    )


@dataclass(kw_only=True, eq=False)
class RayBackend(RolloutBackend):
    """Rollouts as Ray actors, each running a local-backend sandbox on its node.

    Args:
        program: Builds each rollout's command, on the rollout's node (default: the task's `command` or
            the harness's `rollout_command`); pickled to the node, so a module-level function or a closure.
        resources: Custom Ray resources one rollout takes (default one `sandbox` slot).
        harness_resources: Harness name -> its resources, instead of `resources` (e.g. `browser`).
        num_cpus: Ray CPUs one rollout takes (its scheduling share; the sandbox's cgroup is `limits`).
        limits, proxy_port, root_dir, keep_workdirs, no_sandbox: The local backend's options, on the node
            (`root_dir` is a path there).
        address: The Ray cluster to join when this process is not connected yet (veRL's workers are).
        grace_s: How long past the deadline to wait for the node's answer (the verifier runs after the
            harness) before the actor is killed and the rollout reported `timeout`.
    """

    name = "ray"
    description = (
        "one Ray actor per rollout on a node with the harness's resources (default a `sandbox` slot), "
        "running the local backend's bubblewrap sandbox there"
    )

    program: RolloutProgram = default_program
    resources: Mapping[str, float] = field(default_factory=lambda: {"sandbox": 1.0})
    harness_resources: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    num_cpus: float = 1.0
    limits: SandboxLimits | None = None
    proxy_port: int = 18080
    root_dir: Path | None = None
    keep_workdirs: bool = False
    no_sandbox: bool = False
    address: str = "auto"
    grace_s: float = 60.0

    def __post_init__(self) -> None:
        # plain dicts of floats: hydra hands over DictConfigs, which Ray's options reject
        self.resources = {str(k): float(v) for k, v in self.resources.items()}
        self.harness_resources = {
            str(h): {str(k): float(v) for k, v in r.items()} for h, r in self.harness_resources.items()
        }
        if self.num_cpus < 0 or any(v < 0 for v in self.resources.values()):
            raise UsageError(f"ray backend: negative resources {_need_text(self.resources)}")

    def need(self, harness: str) -> dict[str, float]:
        """What one rollout of `harness` asks Ray for, CPU included."""
        custom = self.harness_resources.get(harness, self.resources)
        return {k: v for k, v in {"CPU": self.num_cpus, **custom}.items() if v > 0}

    def _ray(self) -> ModuleType:
        try:
            # optional dependency (the `ray` extra; veRL brings it): imported where the backend uses it
            import ray  # optional dependency (the `ray` extra)
        except ImportError:
            raise ForgeError(
                "the ray rollout backend needs Ray",
                hint="pip install 'forge-eval[ray]' (veRL installs it too)",
            ) from None
        if not ray.is_initialized():
            try:
                ray.init(address=self.address, include_dashboard=False, log_to_driver=False)
            except ConnectionError as e:
                raise ForgeError(
                    f"no Ray cluster to join at {self.address!r}: {e}",
                    hint="start one (ray start --head) or set the ray backend's address",
                ) from None
        return ray

    def _local_options(self) -> dict[str, Any]:
        return {
            "limits": self.limits,
            "root_dir": self.root_dir,
            "keep_workdirs": self.keep_workdirs,
            "proxy_port": self.proxy_port,
            "no_sandbox": self.no_sandbox,
        }

    async def start(self, spec: RolloutSpec) -> RolloutHandle:
        ray = self._ray()
        need = self.need(spec.harness)
        check_feasible(await asyncio.to_thread(ray.nodes), need, spec.rollout_id)
        custom = {k: v for k, v in need.items() if k != "CPU"}
        actor = (
            _actor_class()
            .options(num_cpus=need.get("CPU", 0.0), resources=custom, max_restarts=0, max_task_retries=0)
            .remote(self.program, self._local_options())
        )
        running = _Actor(actor)
        handle = RolloutHandle(spec.rollout_id, spec.attempt, running)
        try:
            # placement waits for a free slot; a cluster that never frees one fails within the deadline
            running.node = await asyncio.wait_for(actor.start.remote(spec, _node_ip()), spec.deadline_s)
        except TimeoutError:
            self._kill(running)
            raise ForgeError(
                f"rollout {spec.rollout_id}: no node had {_need_text(need)} free within its deadline "
                f"({spec.deadline_s:g} s)",
                hint="add nodes, or run fewer rollouts at once",
            ) from None
        except ray.exceptions.RayTaskError as e:  # the program or the sandbox refused: its own message
            self._kill(running)
            raise e.cause from None
        except ray.exceptions.RayError as e:
            logger.warning("rollout %s: its Ray actor was lost while starting: %s", spec.rollout_id, e)
            running.lost = True
        return handle

    async def wait(self, handle: RolloutHandle, deadline: float) -> RolloutOutcome:
        import ray  # optional dependency (the `ray` extra)

        running: _Actor = handle.ref
        if running.lost:
            return RolloutOutcome("evicted")
        remaining = deadline - time.time()
        try:
            return await asyncio.wait_for(running.actor.wait.remote(remaining), remaining + self.grace_s)
        except TimeoutError:  # the node never answered (partitioned, a verifier that hangs)
            logger.warning(
                "rollout %s: node %s did not answer by its deadline", handle.rollout_id, running.node
            )
            await self.stop(handle)
            return RolloutOutcome("timeout")
        except ray.exceptions.RayTaskError as e:
            raise e.cause from None
        except ray.exceptions.RayError as e:  # node, raylet or worker process gone
            logger.warning("rollout %s: lost its Ray node %s: %s", handle.rollout_id, running.node, e)
            running.lost = True
            return RolloutOutcome("evicted")

    async def logs(self, handle: RolloutHandle) -> str:
        import ray  # optional dependency (the `ray` extra)

        running: _Actor = handle.ref
        if running.final_logs is not None:  # stopped: the actor may still answer while its kill is under way
            return running.final_logs
        try:
            return await asyncio.wait_for(running.actor.logs.remote(), _LOGS_TIMEOUT_S)
        except (ray.exceptions.RayError, TimeoutError) as e:
            return f"(no logs: the rollout's actor on node {running.node} is gone: {type(e).__name__})"

    async def stop(self, handle: RolloutHandle) -> None:
        import ray  # optional dependency (the `ray` extra)

        running: _Actor = handle.ref
        if running.stopped:
            return
        running.stopped = True
        try:
            if not running.lost:  # the actor kills the sandbox and runs the program's cleanup there
                running.final_logs = await asyncio.wait_for(running.actor.stop.remote(), self.grace_s)
        except (ray.exceptions.RayError, TimeoutError) as e:
            logger.warning("rollout %s: stop on node %s failed: %s", handle.rollout_id, running.node, e)
        finally:
            self._kill(running)  # its process ends; a sandbox left behind dies with it (--die-with-parent)

    def _kill(self, running: _Actor) -> None:
        import ray  # optional dependency (the `ray` extra)

        with contextlib.suppress(ray.exceptions.RayError):  # already gone with its node
            ray.kill(running.actor, no_restart=True)
