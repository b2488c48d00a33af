"""The `Harness` interface: the agent loop a benchmark's tasks run in."""

from abc import ABC, abstractmethod
from typing import Any, ClassVar

from inspect_ai.solver import Solver
from inspect_ai.tool import Tool

from forge_eval.harnesses._facts import HarnessFacts


class Harness(ABC):
    """An agent harness (a ReAct loop, Codex CLI, Claude Code, ...) as an Inspect solver."""

    name: ClassVar[str]
    description: ClassVar[str]
    #: Tagging cues and tool rules, read by training and behavioral analysis through `facts_for()`.
    facts: ClassVar[HarnessFacts]

    def requirements(self) -> list[str]:
        """What is missing to run this harness here (binaries, packages), one message each."""
        return []

    @abstractmethod
    def solver(self, *, tools: list[Tool], system_prompt: str, **options: Any) -> Solver:
        """The solver that runs the agent with the benchmark's tools and prompt.

        It must begin with `seed_per_epoch()` so that every epoch samples with its own seed.
        """
