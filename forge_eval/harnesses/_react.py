"""The native ReAct harness: Inspect's own `react()` agent with the benchmark's tools (in training
rollouts the same agent runs as a program in the sandbox: `_react_program`)."""

import json
import sys
from pathlib import Path
from typing import Any

from inspect_ai import __version__ as inspect_ai_version
from inspect_ai.agent import AgentPrompt, as_solver, react
from inspect_ai.solver import Solver
from inspect_ai.tool import Tool

from forge_eval.harnesses._environment import TaskEnvironment
from forge_eval.harnesses._external import Launch, harness_rollout
from forge_eval.harnesses._facts import OTHER, HarnessFacts, TaggingCues, ToolUse, shell
from forge_eval.harnesses._harness import Harness
from forge_eval.harnesses._shell import with_exit_status
from forge_eval.harnesses._toolbridge import ToolBridge
from forge_eval.harnesses._workspace import Workspace
from forge_eval.sandbox import RolloutCommand, RolloutSpec, python_ro_binds

_PROGRAM = "forge_eval.harnesses._react_program"

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
    runs_rollouts = True

    @property
    def version(self) -> str:
        return f"inspect_ai {inspect_ai_version}"

    def agent(self, *, tools: list[Tool], system_prompt: str, **options: Any) -> Solver:
        agent = react(
            prompt=AgentPrompt(instructions=system_prompt),
            tools=with_exit_status(tools),
            **options,
        )
        return as_solver(agent)

    async def rollout_command(
        self, spec: "RolloutSpec", workdir: Path, environment: TaskEnvironment
    ) -> "RolloutCommand":
        """A training rollout: this solver in a one-sample Inspect eval run as a program in the sandbox
        (`_react_program`), the task's tools reached through the tool bridge, its model the rollout's
        proxy (`harness_rollout`)."""
        def launch(environment: TaskEnvironment, bridge: ToolBridge, workspace: Workspace) -> Launch:
            program = workspace.root / "react.json"
            text = json.dumps({"system_prompt": environment.system_prompt, "prompt": environment.prompt})
            argv = [sys.executable, "-m", _PROGRAM, str(program)]
            return Launch(argv, {"INSPECT_DISPLAY": "none"}, {program: text})

        return await harness_rollout(environment, workdir, launch, final_answer, ro_binds=python_ro_binds())


def final_answer(stdout: str) -> str:
    """The `answer` of the program's last JSON line ("" when it printed none)."""
    for line in reversed(stdout.splitlines()):
        try:
            printed = json.loads(line)
        except ValueError:
            continue
        if isinstance(printed, dict) and "answer" in printed:
            return str(printed["answer"])
    return ""
