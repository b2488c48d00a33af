"""MCP-Atlas's agent loop (harness "atlas-loop"), as in v1's `run_agent`.

Each turn is one model call offering every enabled tool; all tool calls of a reply run, and the loop
ends at a reply without tool calls or after `max_turns` (20) turns. There is no system prompt by
default (upstream adds one only with USE_SYSTEM_PROMPT_IN_COMPLETION) and no submit tool: the last
assistant text is the answer the claims are judged against. Inspect's `react()` needs a submit call
and nudges the model to continue, hence this loop.
"""

from __future__ import annotations

from typing import Any

from inspect_ai.model import ChatMessageSystem, execute_tools
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.tool import Tool

from forge_eval.harnesses._harness import Harness

MAX_TURNS = 20


@solver
def atlas_loop(tools: list[Tool], prompt: str = "", max_turns: int = MAX_TURNS) -> Solver:
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        if prompt:
            state.messages.insert(0, ChatMessageSystem(content=prompt))
        state.tools = list(tools)
        for _ in range(state.metadata.get("max_turns") or max_turns):
            state = await generate(state, tool_calls="none")
            if not state.output.message.tool_calls:
                break
            result = await execute_tools(state.messages, state.tools)
            state.messages.extend(result.messages)
        return state

    return solve


class AtlasLoopHarness(Harness):
    name = "atlas-loop"
    description = "MCP-Atlas v1's loop: every enabled tool each turn, stops at a reply without tool calls"
    #: Turns per task unless the sample says otherwise (upstream v1's cap).
    max_turns = MAX_TURNS

    def agent(self, *, tools: list[Tool], system_prompt: str, **options: Any) -> Solver:
        return atlas_loop(tools, system_prompt, **options)
