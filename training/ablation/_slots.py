"""The ablation's environment: a register of named slots that the agent must write, in order.

A task is a procedure of writes ("goal a 3 c 1": first a := 3, then c := 1); every other slot must stay
0. The world changes only through the `set` tool and keeps the log of its writes, as a device keeps an
audit log; the verifier reads the world (its slots and its write log) alone, never the transcript, so a
planner or subagent call can influence the reward only through the actions that follow it.
"""

import hashlib
import itertools
import math
import random
from collections import Counter
from dataclasses import dataclass, field

SLOTS = ("a", "b", "c", "d")
VALUES = (1, 2, 3)
TARGETS_PER_TASK = 2


@dataclass(frozen=True, slots=True)
class SlotTask:
    """One task: the (slot, value) targets, in slot order."""

    targets: tuple[tuple[str, int], ...]

    @property
    def task_id(self) -> str:
        return "slots-" + "-".join(f"{s}{v}" for s, v in self.targets)

    @property
    def goal(self) -> str:
        return "goal " + " ".join(f"{s} {v}" for s, v in self.targets)


def all_tasks() -> list[SlotTask]:
    """Every task of the environment, in a fixed order."""
    return [
        SlotTask(tuple(zip(slots, values, strict=True)))
        for slots in itertools.combinations(SLOTS, TARGETS_PER_TASK)
        for values in itertools.product(VALUES, repeat=TARGETS_PER_TASK)
    ]


def split_tasks(n_heldout: int, seed: int = 0) -> tuple[list[SlotTask], list[SlotTask]]:
    """(training tasks, held-out tasks): a seeded split that every variant and seed shares, balanced so
    that no slot pair and no target (slot, value) is held out more often than an even spread allows.

    Why balanced: a plain random 14 of 54 held out "d 2" in 5 tasks and the slot pair (a, d) in 5, so
    training saw "d 2" in 4 tasks where other targets got 5-8; the runs that fell short failed exactly on
    those held-out tasks. Balanced, training sees every target in at least 6 of its 9 tasks. Drawn one
    task at a time among those that keep the caps (a dead end, rare, starts the draw again).
    """
    tasks = all_tasks()
    if not 0 < n_heldout < len(tasks):
        raise ValueError(f"n_heldout must be in (0, {len(tasks)}), got {n_heldout}")
    pairs = {_pair(t) for t in tasks}
    targets = {target for t in tasks for target in t.targets}
    pair_cap = math.ceil(n_heldout / len(pairs))
    target_cap = math.ceil(TARGETS_PER_TASK * n_heldout / len(targets))
    rng = random.Random(seed)
    while True:
        heldout: set[int] = set()
        per_pair: Counter[tuple[str, ...]] = Counter()
        per_target: Counter[tuple[str, int]] = Counter()
        while len(heldout) < n_heldout:
            fits = [
                i
                for i, t in enumerate(tasks)
                if i not in heldout
                and per_pair[_pair(t)] < pair_cap
                and all(per_target[target] < target_cap for target in t.targets)
            ]
            if not fits:
                break
            pick = rng.choice(fits)
            heldout.add(pick)
            per_pair[_pair(tasks[pick])] += 1
            per_target.update(tasks[pick].targets)
        else:
            return [t for i, t in enumerate(tasks) if i not in heldout], [
                t for i, t in enumerate(tasks) if i in heldout
            ]


def _pair(task: SlotTask) -> tuple[str, ...]:
    return tuple(slot for slot, _ in task.targets)


@dataclass
class SlotWorld:
    """The environment state of one rollout."""

    task: SlotTask
    state: dict[str, int] = field(default_factory=lambda: dict.fromkeys(SLOTS, 0))
    writes: list[tuple[str, int]] = field(default_factory=list)
    actions: int = 0

    def set(self, slot: str, value: int) -> str:
        """Apply one `set` tool call; the result text goes back to the agent."""
        self.actions += 1
        if slot not in self.state:
            return "error"
        self.state[slot] = value
        self.writes.append((slot, value))
        return "ok"

    def verify(self) -> tuple[float, bool, dict[str, object]]:
        """(reward, success, verifier output) from the world alone.

        Write k earns half of target k's share of the reward for hitting its slot and half for writing its
        value; the total is halved when any slot outside the goal was changed. Success is the write
        log equal to the goal. Why ordered, and why the value counts on its own: with order-free credit
        the two writes were interchangeable, and policies learning from scratch often settled on writing
        the same target slot twice (both action calls learned the same copy); with the value credited only
        on the right slot, values were learned after slots, by which time their distribution had
        collapsed onto one value. Partial credit at all is what makes the task learnable from scratch.
        """
        targets = list(self.task.targets)
        half = 1 / (2 * len(targets))
        reward = 0.0
        for (slot, value), (written_slot, written_value) in zip(targets, self.writes, strict=False):
            reward += half * (written_slot == slot) + half * (written_value == value)
        collateral = sorted({s for s, _ in self.writes if s not in dict(targets)})
        if collateral:
            reward *= 0.5
        success = self.writes == targets
        output = {
            "state": dict(self.state),
            "writes": [list(w) for w in self.writes],
            "targets": [list(t) for t in targets],
            "collateral": collateral,
            "actions": self.actions,
        }
        return reward, success, output


def data_order(tasks: list[SlotTask], seed: int, step: int, n: int) -> list[SlotTask]:
    """The `n` training tasks of `step` for `seed`: a pure function, so a resumed run draws the same."""
    rng = random.Random(f"{seed}:{step}")
    return rng.sample(tasks, n)


def order_hash(tasks: list[SlotTask], seed: int, steps: int, n: int) -> str:
    """A digest of the whole data order of a run (equal for every variant of one seed)."""
    h = hashlib.sha256()
    for step in range(steps):
        for task in data_order(tasks, seed, step, n):
            h.update(task.task_id.encode() + b";")
    return h.hexdigest()[:16]
