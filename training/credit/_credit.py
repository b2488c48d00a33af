"""The `CreditVariant` interface: which calls of a rollout learn, and with what share of its reward.

Every variant returns, per call, a reward r_t = gamma^(T-t) * r_T (Eq. 1; T is the last call), the scale
gamma^(T-t) that multiplies the rollout-level GRPO advantage, and a loss mask. The rollout advantage is
computed once from r_T, so with gamma = 1 every variant gives a rollout the same advantage and differs only
in which calls carry loss: that is what the credit ablation isolates.
"""

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import ClassVar

from forge_eval._errors import UsageError
from forge_eval.proxy.records import RoleTag
from forge_eval.training.trajectories import Trajectory

# The roles that are the policy acting in the task; everything else is harness-internal.
TASK_ROLES: frozenset[RoleTag] = frozenset({"action", "answer"})


@dataclass(frozen=True, slots=True)
class CallCredit:
    """One call's share: its Eq. (1) reward, the advantage scale gamma^(T-t), and whether it learns."""

    reward: float
    scale: float
    loss_mask: bool


@dataclass(frozen=True)
class CreditVariant(ABC):
    """Assigns per-call rewards and loss masks on top of one rollout-level advantage.

    Args:
        gamma: Discount per call towards the start of the rollout (Eq. 1); 1 gives every call the
            rollout's full reward.
    """

    name: ClassVar[str]
    description: ClassVar[str]
    gamma: float = 1.0

    def __post_init__(self) -> None:
        if not 0.0 < self.gamma <= 1.0:
            raise UsageError(
                f"credit gamma must be in (0, 1], got {self.gamma}",
                hint="gamma = 1 is Eq. (1) without discounting (the default)",
            )

    def assign(self, trajectory: Trajectory, reward: float) -> list[CallCredit]:
        """Per-call credit for `trajectory` with terminal reward `reward`, in call order."""
        last = len(trajectory.calls) - 1
        masks = self.loss_mask(trajectory)
        return [
            CallCredit(reward=self.gamma ** (last - t) * reward, scale=self.gamma ** (last - t), loss_mask=m)
            for t, m in enumerate(masks)
        ]

    @abstractmethod
    def loss_mask(self, trajectory: Trajectory) -> list[bool]:
        """Which calls carry loss."""


def final_trainable(trajectory: Trajectory) -> int | None:
    """Index of the last task call (action/answer), else of the last call; None for no calls."""
    roles = trajectory.roles
    for i in range(len(roles) - 1, -1, -1):
        if roles[i] in TASK_ROLES:
            return i
    return len(roles) - 1 if roles else None
