"""The `Harness` interface: the agent loop a benchmark's tasks run in."""

from abc import ABC, abstractmethod
from collections.abc import Awaitable, Mapping
from pathlib import Path
from typing import Any, ClassVar

from inspect_ai.solver import Solver, chain
from inspect_ai.tool import Tool

from forge_eval import __version__
from forge_eval._errors import ForgeError
from forge_eval.harnesses._environment import TaskEnvironment
from forge_eval.harnesses._facts import HarnessFacts
from forge_eval.harnesses._seeding import seed_per_epoch
from forge_eval.sandbox import RolloutCommand, RolloutSpec


class Harness(ABC):
    """An agent harness (a ReAct loop, Codex CLI, Claude Code, ...) as an Inspect solver.

    What every harness has is declared here: `solver` (one template: `seed_per_epoch()`, then the
    harness's own `agent`), `facts` (None: the generic facts apply), `version` (for the protocol
    record), `requirements`, and `rollout_command` (training rollouts; `runs_rollouts` says whether a
    harness has one).
    """

    name: ClassVar[str]
    description: ClassVar[str]
    #: Tagging cues and tool rules, read by training and behavioral analysis through `facts_for()`;
    #: None for a harness without its own (the generic facts then apply).
    facts: ClassVar[HarnessFacts | None] = None
    #: What one sample of this harness needs on a cluster node beyond the benchmark's (see
    #: `Benchmark.resources`); harness programs take a `sandbox` slot.
    resources: ClassVar[Mapping[str, float]] = {}
    #: Whether `rollout_command` is implemented (training rollouts can run this harness).
    runs_rollouts: ClassVar[bool] = False

    def requirements(self) -> list[str]:
        """What is missing to run this harness here (binaries, packages), one message each."""
        return []

    @property
    def version(self) -> str:
        """What the harness is at this run, pinned (results.json's protocol record): its own program's
        version where it has one, else this forge-eval's (its code is at the run's git revision)."""
        return f"forge-eval {__version__}"

    def solver(self, *, tools: list[Tool], system_prompt: str, **options: Any) -> Solver:
        """The solver that runs the agent with the benchmark's tools and prompt.

        Every epoch samples with its own seed: `seed_per_epoch()` comes first, then `agent(...)`.
        """
        return chain(seed_per_epoch(), self.agent(tools=tools, system_prompt=system_prompt, **options))

    @abstractmethod
    def agent(self, *, tools: list[Tool], system_prompt: str, **options: Any) -> Solver:
        """The harness's own agent loop, as a solver (`solver` puts the per-epoch seeding before it)."""

    def rollout_command(
        self, spec: RolloutSpec, workdir: Path, environment: TaskEnvironment
    ) -> RolloutCommand | Awaitable[RolloutCommand]:
        """How a training rollout runs this harness in its sandbox on the task set up in `environment`
        (a harness with `runs_rollouts` implements it; the others say they cannot). The command's
        `cleanup` closes the environment; when this raises, the caller closes it."""
        raise self.no_rollouts()

    def no_rollouts(self) -> ForgeError:
        """The error of a harness without `rollout_command` (checked before a task is set up for it)."""
        return ForgeError(
            f"harness {self.name!r} cannot run training rollouts: it has no rollout_command()",
            hint="give the task a `command`, or pass the backend a RolloutProgram for this harness",
        )
