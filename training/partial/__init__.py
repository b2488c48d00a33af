"""Partial-rollout policies beside the credit variants: discard, zero, mask, carry (`PARTIAL_POLICIES`).

The registry holds the policy classes; `partial_policy(name, ...)` makes one. `build_batch` and the veRL
AgentLoop apply the chosen policy to the rollouts the failure policy marks as cut short (`is_partial`).
"""

from collections.abc import Callable

from forge_eval._registry import Registry
from forge_eval.training.partial._partial import (
    DISCARD,
    PARTIAL_REASONS,
    Admission,
    PartialPolicy,
    PartialReport,
    is_partial,
    with_reward,
)
from forge_eval.training.partial.carry import Carry
from forge_eval.training.partial.discard import Discard
from forge_eval.training.partial.mask import Mask
from forge_eval.training.partial.zero import Zero
from forge_eval.training.trajectories import Trajectory

PARTIAL_POLICIES: Registry[type[PartialPolicy]] = Registry("partial-rollout policy")
for _policy in (Discard, Zero, Mask, Carry):
    PARTIAL_POLICIES.register(_policy.name, _policy)


def partial_policy(name: str, *, resumable: Callable[[Trajectory], bool] | None = None) -> PartialPolicy:
    """The partial-rollout policy `name` (unknown names list the valid ones); `resumable` is `carry`'s."""
    cls = PARTIAL_POLICIES.get(name)
    return Carry(resumable) if cls is Carry and resumable is not None else cls()


__all__ = [
    "DISCARD",
    "PARTIAL_POLICIES",
    "PARTIAL_REASONS",
    "Admission",
    "Carry",
    "Discard",
    "Mask",
    "PartialPolicy",
    "PartialReport",
    "Zero",
    "is_partial",
    "partial_policy",
    "with_reward",
]
