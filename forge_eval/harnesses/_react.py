"""The native ReAct harness: Inspect's own `react()` agent with the benchmark's tools."""

from typing import Any

from inspect_ai.agent import AgentPrompt, as_solver, react
from inspect_ai.solver import Solver, chain
from inspect_ai.tool import Tool

from forge_eval.harnesses._harness import Harness
from forge_eval.harnesses._seeding import seed_per_epoch


class ReactHarness(Harness):
    name = "react"
    description = "Inspect's native ReAct loop (react()) with the benchmark's tools and a submit() tool"

    def solver(self, *, tools: list[Tool], system_prompt: str, **options: Any) -> Solver:
        agent = react(
            prompt=AgentPrompt(instructions=system_prompt),
            tools=tools,
            **options,
        )
        return chain(seed_per_epoch(), as_solver(agent))
