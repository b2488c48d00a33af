"""The ablation's environment: a register of named slots that the agent must set to target values.

A task names target values for some slots ("goal a 3 c 5"); every other slot must stay 0. The world
changes only through the `set` tool; the verifier reads the final state alone (never the transcript), so
a planner or subagent call can influence the reward only through the actions that follow it.
"""

import hashlib
import itertools
import random
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
    """(training tasks, held-out tasks): a seeded split that every variant and seed shares."""
    tasks = all_tasks()
    if not 0 < n_heldout < len(tasks):
        raise ValueError(f"n_heldout must be in (0, {len(tasks)}), got {n_heldout}")
    heldout = set(random.Random(seed).sample(range(len(tasks)), n_heldout))
    return [t for i, t in enumerate(tasks) if i not in heldout], [
        t for i, t in enumerate(tasks) if i in heldout
    ]


@dataclass
class SlotWorld:
    """The environment state of one rollout."""

    task: SlotTask
    state: dict[str, int] = field(default_factory=lambda: dict.fromkeys(SLOTS, 0))
    actions: int = 0
    touched: set[str] = field(default_factory=set)

    def set(self, slot: str, value: int) -> str:
        """Apply one `set` tool call; the result text goes back to the agent."""
        self.actions += 1
        if slot not in self.state:
            return "error"
        self.state[slot] = value
        self.touched.add(slot)
        return "ok"

    def verify(self) -> tuple[float, bool, dict[str, object]]:
        """(reward, success, verifier output) from the final state alone.

        Each target slot earns half its share for being set at all and the other half for holding its
        value; the total is halved when any other slot was changed. Success is all targets right and
        nothing else touched. The partial credit for the right slot is what makes the task learnable from
        scratch: all-or-nothing per target (1 in 6 random sets earns anything) left a policy learning from
        scratch with too little signal to discover that the goal names the slots. A wrong value costs
        nothing, so exploring values is never punished.
        """
        targets = dict(self.task.targets)
        touched = sum(s in self.touched for s in targets)
        right = sum(self.state[s] == v for s, v in targets.items())
        collateral = [s for s in SLOTS if s not in targets and self.state[s] != 0]
        reward = (touched + right) / (2 * len(targets)) * (0.5 if collateral else 1.0)
        success = right == len(targets) and not collateral
        output = {
            "state": dict(self.state),
            "targets": targets,
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
