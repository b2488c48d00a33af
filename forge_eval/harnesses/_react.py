"""The native ReAct harness: Inspect's own `react()` agent with the benchmark's tools."""

from typing import Any

from inspect_ai.agent import AgentPrompt, as_solver, react
from inspect_ai.solver import Solver, chain
from inspect_ai.tool import Tool

from forge_eval.harnesses._facts import OTHER, HarnessFacts, TaggingCues, ToolUse, shell
from forge_eval.harnesses._harness import Harness
from forge_eval.harnesses._seeding import seed_per_epoch
from forge_eval.harnesses._shell import with_exit_status

#: Also the facts of any harness forge-eval does not know (see `facts_for`), with every known tool table.
GENERIC_TAGGING = TaggingCues(title_by_schema=True, aux_without_tools=False)

FACTS = HarnessFacts(
    name="react",
    tagging=GENERIC_TAGGING,
    tools={
        "bash": shell("command"),  # Inspect's bash() and bash_with_status()
        "bash_session": shell("input"),
        "text_editor": ToolUse("editor", ("command", "path"), reads=("view",)),
        "python": OTHER,
        "submit": OTHER,
        "think": OTHER,
    },
)


class ReactHarness(Harness):
    name = "react"
    description = "Inspect's native ReAct loop (react()) with the benchmark's tools and a submit() tool"
    facts = FACTS

    def solver(self, *, tools: list[Tool], system_prompt: str, **options: Any) -> Solver:
        agent = react(
            prompt=AgentPrompt(instructions=system_prompt),
            tools=with_exit_status(tools),
            **options,
        )
        return chain(seed_per_epoch(), as_solver(agent))
