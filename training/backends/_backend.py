"""The `RolloutBackend` interface: start a harness rollout in isolation, wait for it, read logs, stop it.

Implementations (local bubblewrap, Kubernetes pods) live beside this module; the trainer's AgentLoop only
sees this interface. A backend runs the harness pointed at the proxy (`proxy_base_url` + `api_key`), then
the task's verifier, and reports how the rollout ended with the verifier's reward.
"""

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

# How a rollout ended, in the proxy control plane's status words.
RolloutStatus = Literal["completed", "timeout", "harness_crash", "oom", "evicted", "aborted"]


@dataclass(frozen=True)
class RolloutSpec:
    """Everything a backend needs to run one rollout attempt.

    Attributes:
        rollout_id: The proxy's rollout id (also the sandbox/pod name stem).
        attempt: The attempt number; a retried rollout gets a fresh attempt and a fresh key.
        harness: The harness name (`forge_eval.harnesses.HARNESSES`).
        task: The forge task spec from the dataset row (`extra_info["forge_task"]`).
        proxy_base_url: Base URL the harness must use, with the rollout path prefix.
        api_key: The rollout's signed key for the proxy.
        deadline_s: Wall-clock budget for harness + verifier.
        env: Extra environment for the harness process.
        group: The GRPO group (rollouts of one prompt); a label on the rollout's pod.
    """

    rollout_id: str
    attempt: int
    harness: str
    task: dict[str, Any]
    proxy_base_url: str
    api_key: str
    deadline_s: float
    env: dict[str, str] = field(default_factory=dict)
    group: str | None = None


@dataclass(frozen=True)
class RolloutHandle:
    """A started rollout; `ref` is the backend's own reference (a process, a pod name)."""

    rollout_id: str
    attempt: int
    ref: Any = None


@dataclass(frozen=True)
class RolloutOutcome:
    """How a rollout ended. `reward` is the verifier's; None when the verifier could not grade it."""

    status: RolloutStatus
    exit_code: int | None = None
    reward: float | None = None
    verifier_output: dict[str, Any] | None = None
    answer: str | None = None


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
