"""GRPO advantages over the rollouts of a task group, computed once per rollout.

Matches veRL's `compute_grpo_outcome_advantage`: A = (r - mean_g) / (std_g + eps) with the unbiased
(N-1) std, or A = r - mean_g for Dr.GRPO. The advantage is per rollout so that every call of a rollout gets
the same value, whatever the number of calls (no row-count bias).

A group left with one surviving rollout (its siblings discarded by the failure policy) has no baseline.
By default it is dropped and counted (reference rl-training.md §1.7, pitfall 2). veRL cannot drop it: its
AgentLoop returns each rollout on its own, and V1's GRPO gives a lone rollout mean 0 and std 1, so it
trains on its raw reward (r / (1 + eps)). `singletons="raw"` reproduces exactly that, so a batch built
here and one veRL builds from the same outputs agree (tests/training/test_advantages.py checks both
against veRL 0.9.1 itself).
"""

from collections import defaultdict
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from forge_eval._errors import UsageError

GRPO_EPSILON = 1e-6
Singletons = Literal["drop", "raw"]


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
    singletons: Singletons = "drop",
    epsilon: float = GRPO_EPSILON,
) -> GroupAdvantages:
    """Group-relative advantages of rollouts.

    Args:
        rewards: The terminal reward of each rollout.
        groups: The group (task uid) of each rollout.
        norm_by_std: Divide by the group's unbiased std (GRPO); False gives Dr.GRPO.
        min_group_size: Groups with fewer surviving rollouts are dropped (at least 2).
        singletons: "drop" a group of one (default), or give it veRL's advantage, its "raw" reward
            (divided by 1 + epsilon under std normalisation).
        epsilon: Added to the std, as veRL does.
    """
    if len(rewards) != len(groups):
        raise ValueError(f"{len(rewards)} rewards for {len(groups)} group ids")
    if min_group_size < 2:
        raise UsageError(
            f"min_group_size must be at least 2, got {min_group_size}",
            hint="a group of one has no baseline: its advantage would be its raw reward",
        )
    if singletons not in ("drop", "raw"):
        raise UsageError(f"unknown singletons policy {singletons!r}", hint="use 'drop' or 'raw' (veRL's)")
    members: dict[Hashable, list[int]] = defaultdict(list)
    for i, g in enumerate(groups):
        members[g].append(i)
    result = GroupAdvantages(advantages=[None] * len(rewards))
    values = np.asarray(rewards, dtype=np.float64)
    for g, idx in members.items():
        if len(idx) == 1 and singletons == "raw":  # veRL: mean 0, std 1
            r = float(values[idx[0]])
            result.advantages[idx[0]] = r / (1.0 + epsilon) if norm_by_std else r
            result.groups_kept += 1
            continue
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
