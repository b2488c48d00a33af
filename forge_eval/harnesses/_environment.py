"""A benchmark task set up outside Inspect, for one training rollout of a real harness.

In `forge-eval run` Inspect sets a sample up (its setup solver, the sample store its tools read) and its
scorer grades it. A training rollout has no Inspect sample: the benchmark builds a `TaskEnvironment`
instead (`rollout_environment(task)` on its `BENCHMARKS` entry, called by `forge_eval.training.rollouts`),
from the same setup and grading code as its eval path; the harness's `rollout_command` gets it and
serves its tools with `serve_tools`.
"""

import asyncio
import contextvars
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from inspect_ai.tool import Tool

from forge_eval.harnesses._toolbridge import ToolBridge
from forge_eval.proxy import serve_in_task
from forge_eval.sandbox import Verdict


@dataclass(frozen=True)
class TaskEnvironment:
    """One task ready for a rollout.

    Attributes:
        prompt: The task as the eval path's sample input.
        system_prompt: The benchmark's instructions (a harness's prompt begins with them).
        tools: The task's Inspect tools; they run in `context`.
        context: The context the tools run in: the rollout's own sample store (their world binding).
        grade: The benchmark's grader, on the harness's final answer and the environment's final state.
        close: Frees what the environment holds (its world); called once, after grading.
    """

    prompt: str
    system_prompt: str
    tools: list[Tool]
    context: contextvars.Context
    grade: Callable[[str], Awaitable["Verdict"]]
    close: Callable[[], Awaitable[None]]


Stop = Callable[[], Awaitable[None]]


async def serve_tools(bridge: ToolBridge, context: contextvars.Context) -> tuple[str, Stop]:
    """Serve `bridge` on a free port from a task running in `context` (so each tool call sees the
    rollout's store) until the returned `stop()`; returns (url, stop)."""
    ready: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    stopping = asyncio.Event()

    async def hold() -> None:
        try:
            async with serve_in_task(bridge.app()) as url:
                ready.set_result(url)
                await stopping.wait()
        except BaseException as e:
            if not ready.done():
                ready.set_exception(e)
            raise

    task = asyncio.create_task(hold(), context=context)
    url = await ready

    async def stop() -> None:
        stopping.set()
        await task

    return url, stop
