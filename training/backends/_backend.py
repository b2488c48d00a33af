"""The `RolloutBackend` interface: start a harness rollout in isolation, wait for it, read logs, stop it.

Implementations (local bubblewrap, Kubernetes pods) live beside this module; the trainer's AgentLoop only
sees this interface. A backend runs the harness pointed at the proxy (`proxy_base_url` + `api_key`), then
the task's verifier, and reports how the rollout ended with the verifier's reward.
"""

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, ClassVar

from forge_eval.sandbox import RolloutOutcome, RolloutSpec


@dataclass(frozen=True)
class RolloutHandle:
    """A started rollout; `ref` is the backend's own reference (a process, a pod name)."""

    rollout_id: str
    attempt: int
    ref: Any = None


class RolloutBackend(ABC):
    """Runs rollouts in isolation (one sandbox or pod per rollout)."""

    name: ClassVar[str]
    description: ClassVar[str]

    @abstractmethod
    async def start(self, spec: RolloutSpec) -> RolloutHandle:
        """Start the harness for `spec` and return at once."""

    @abstractmethod
    async def wait(self, handle: RolloutHandle, deadline: float) -> RolloutOutcome:
        """Wait until the rollout ends or the unix time `deadline` passes (then stop it: status timeout)."""

    @abstractmethod
    async def logs(self, handle: RolloutHandle) -> str:
        """The harness's output so far (for discard diagnostics)."""

    @abstractmethod
    async def stop(self, handle: RolloutHandle) -> None:
        """Stop the rollout and free its resources; safe to call twice."""
