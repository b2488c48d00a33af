"""Claw-Eval's agent loop (harness "claw-loop"): upstream's own runner, read from the pinned tree.

The loop (`claw_eval/runner/loop.py`: all tools every turn, tool results passed whole, a reply without
tool calls ends the trial, the task's turn and time limits, compaction, the simulated user) is upstream's
code and runs as part of a whole Claw-Eval trial (`forge_eval.benchmarks.claweval`), in upstream's own
venv with its mock services, sandbox and grader around it. This harness is the name a run selects it by;
it has no Inspect loop of its own, so another benchmark's samples fail in it with that error.
"""

from __future__ import annotations

from typing import Any

from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.tool import Tool

from forge_eval._errors import ForgeError
from forge_eval.harnesses._harness import Harness


class ClawLoopHarness(Harness):
    name = "claw-loop"
    description = "Claw-Eval's own loop (upstream's runner, run by the claweval benchmark)"

    def agent(self, *, tools: list[Tool], system_prompt: str, **options: Any) -> Solver:
        return only_claweval()


@solver
def only_claweval() -> Solver:
    """A sample of another benchmark in this harness: the error that says why it cannot run."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        raise ForgeError(
            "harness 'claw-loop' is upstream Claw-Eval's own runner: it runs only the claweval benchmark",
            hint="pick another harness for this benchmark (forge-eval harnesses lists them)",
        )

    return solve
