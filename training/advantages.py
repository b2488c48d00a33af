"""GRPO advantages over the rollouts of a task group, computed once per rollout.

Matches veRL's `compute_grpo_outcome_advantage`: A = (r - mean_g) / (std_g + eps) with the unbiased
(N-1) std, or A = r - mean_g for Dr.GRPO. Unlike veRL, a group with fewer than `min_group_size` surviving
rollouts is dropped and counted instead of getting mean 0 / std 1 (which would hand a lone rollout its raw
reward as advantage). The advantage is per rollout so that every call of a rollout gets the same value,
whatever the number of calls (no row-count bias).
"""

from collections import defaultdict
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field

import numpy as np

from forge_eval._errors import UsageError

GRPO_EPSILON = 1e-6


@dataclass(slots=True)
class GroupAdvantages:
    """Per-rollout advantages (None where the rollout's group was dropped) and what was dropped."""

    advantages: list[float | None]
    groups_kept: int = 0
    groups_dropped: int = 0
    rollouts_dropped: int = 0
    dropped_groups: list[Hashable] = field(default_factory=list)


def grpo_advantages(
    rewards: Sequence[float],
    groups: Sequence[Hashable],
    *,
    norm_by_std: bool = True,
    min_group_size: int = 2,
    epsilon: float = GRPO_EPSILON,
) -> GroupAdvantages:
    """Group-relative advantages of rollouts.

    Args:
        rewards: The terminal reward of each rollout.
        groups: The group (task uid) of each rollout.
        norm_by_std: Divide by the group's unbiased std (GRPO); False gives Dr.GRPO.
        min_group_size: Groups with fewer surviving rollouts are dropped (at least 2).
        epsilon: Added to the std, as veRL does.
    """
    if len(rewards) != len(groups):
        raise ValueError(f"{len(rewards)} rewards for {len(groups)} group ids")
    if min_group_size < 2:
        raise UsageError(
            f"min_group_size must be at least 2, got {min_group_size}",
            hint="a group of one has no baseline: its advantage would be its raw reward",
        )
    members: dict[Hashable, list[int]] = defaultdict(list)
    for i, g in enumerate(groups):
        members[g].append(i)
    result = GroupAdvantages(advantages=[None] * len(rewards))
    values = np.asarray(rewards, dtype=np.float64)
    for g, idx in members.items():
        if len(idx) < min_group_size:
            result.groups_dropped += 1
            result.rollouts_dropped += len(idx)
            result.dropped_groups.append(g)
            continue
        r = values[idx]
        centered = r - r.mean()
        adv = centered / (r.std(ddof=1) + epsilon) if norm_by_std else centered
        for i, a in zip(idx, adv, strict=True):
            result.advantages[i] = float(a)
        result.groups_kept += 1
    return result
