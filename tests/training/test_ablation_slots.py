"""The ablation's held-out split: balanced over slot pairs and targets, seeded, a partition of the tasks.

The caps are counted here from the task ids, independently of the split's own bookkeeping: no slot pair
held out in more than ceil(n / 6) tasks, no target (slot, value) in more than ceil(2n / 12).
"""

import math
from collections import Counter

import pytest

from forge_eval.training.ablation._slots import all_tasks, split_tasks


def _targets(task_id: str) -> list[str]:
    return task_id.removeprefix("slots-").split("-")  # "slots-a1-d2" -> ["a1", "d2"]


@pytest.mark.parametrize("n", range(1, 54))
def test_split_is_a_partition_within_the_even_spread_caps(n):
    train, heldout = split_tasks(n)
    ids = [t.task_id for t in all_tasks()]
    assert len(heldout) == n and sorted(t.task_id for t in train + heldout) == sorted(ids)
    pairs = Counter("".join(t[0] for t in _targets(h.task_id)) for h in heldout)
    targets = Counter(t for h in heldout for t in _targets(h.task_id))
    assert max(pairs.values()) <= math.ceil(n / 6)
    assert max(targets.values()) <= math.ceil(2 * n / 12)


def test_default_split_trains_every_target_in_at_least_six_tasks():
    train, heldout = split_tasks(14)
    seen = Counter(t for task in train for t in _targets(task.task_id))
    assert len(seen) == 12 and min(seen.values()) >= 6
    # the seeded random split this replaced trained "d2" in 4 tasks only
    assert split_tasks(14) == (train, heldout)  # the same split every call, so every run shares it
    assert split_tasks(14, seed=1)[1] != heldout
