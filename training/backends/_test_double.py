"""`InProcessTestBackend`: a TEST DOUBLE of `RolloutBackend` that runs a Python coroutine as the "harness".

It exists so the AgentLoop can be unit-tested on CPU without sandboxes, pods or a model server. It is not
registered in `ROLLOUT_BACKENDS` and isolates nothing; real rollouts use the local or Kubernetes backend.
"""

import asyncio
import time
from collections.abc import Awaitable, Callable

from forge_eval.sandbox import RolloutOutcome, RolloutSpec
from forge_eval.training.backends._backend import RolloutBackend, RolloutHandle

Script = Callable[[RolloutSpec], Awaitable[RolloutOutcome]]


class InProcessTestBackend(RolloutBackend):
    """Runs `script(spec)` as an asyncio task per rollout; records every spec it was given."""

    name = "in-process-test-double"
    description = "test double: runs a coroutine in-process instead of a sandboxed harness"

    def __init__(self, script: Script) -> None:
        self.script = script
        self.started: list[RolloutSpec] = []
        self.stopped: list[str] = []
        self._tasks: dict[tuple[str, int], asyncio.Task[RolloutOutcome]] = {}

    async def start(self, spec: RolloutSpec) -> RolloutHandle:
        self.started.append(spec)
        self._tasks[(spec.rollout_id, spec.attempt)] = asyncio.create_task(self.script(spec))
        return RolloutHandle(spec.rollout_id, spec.attempt)

    async def wait(self, handle: RolloutHandle, deadline: float) -> RolloutOutcome:
        task = self._tasks[(handle.rollout_id, handle.attempt)]
        try:
            return await asyncio.wait_for(asyncio.shield(task), max(0.0, deadline - time.time()))
        except TimeoutError:
            await self.stop(handle)
            return RolloutOutcome(status="timeout")

    async def logs(self, handle: RolloutHandle) -> str:
        return ""

    async def stop(self, handle: RolloutHandle) -> None:
        task = self._tasks.get((handle.rollout_id, handle.attempt))
        if task is not None and not task.done():
            task.cancel()
        self.stopped.append(handle.rollout_id)
