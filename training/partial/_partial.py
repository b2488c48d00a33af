"""The `PartialPolicy` interface: what the trainer does with a rollout that was cut short.

A rollout is *partial* when the only reasons to discard it are that it did not finish: a timeout, a crash
of the harness before an answer, a lost pod (OOM, eviction), a terminal upstream (network) error, or a
rollout still running. Its calls up to the cut are real samples of the policy; only the verifier's reward
is missing. Any other reason (mixed policy versions, an aborted generation, a declared discard, no calls)
discards it under every policy. A policy decides, per partial rollout, an `Admission`: whether it joins
its GRPO group, with which reward for the group's baseline, whether its calls carry loss, or whether it
is carried to the next step.
"""

from abc import ABC, abstractmethod
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import ClassVar, Literal

from forge_eval.training.failures import CHECKS
from forge_eval.training.trajectories import Trajectory

# The discard reasons of a rollout that was cut short (`training.failures`); "no_reward" follows from them.
PARTIAL_REASONS: frozenset[str] = frozenset(
    {
        "unfinished",
        "timeout",
        "oom",
        "evicted",
        "harness_crash_without_answer",
        "terminal_upstream_error",
    }
)
Action = Literal["train", "zero", "mask", "carry", "discard"]


@dataclass(frozen=True, slots=True)
class Admission:
    """One rollout's fate: `train` (complete), `zero`/`mask` (partial, kept), `carry`, or `discard`.

    `reward` is what the rollout counts with in its group's baseline (None: it is not in the group);
    `learns` says whether its calls carry loss.
    """

    action: Action
    reward: float | None = None
    learns: bool = False

    @property
    def in_group(self) -> bool:
        return self.reward is not None


DISCARD = Admission("discard")


def is_partial(trajectory: Trajectory) -> bool:
    """Cut short with recorded calls, and nothing else wrong: every failed check is a partial reason."""
    reasons = {r for check in CHECKS if (r := check(trajectory)) is not None} - {"no_reward"}
    return bool(trajectory.calls) and bool(reasons) and reasons <= PARTIAL_REASONS


def with_reward(trajectory: Trajectory, reward: float) -> Trajectory:
    """`trajectory` scored with `reward`: a partial rollout has none, and the policy gives it one."""
    if trajectory.rollout.reward == reward:
        return trajectory
    return replace(trajectory, rollout=trajectory.rollout.model_copy(update={"reward": reward}))


@dataclass(frozen=True)
class PartialPolicy(ABC):
    """Decides the `Admission` of each rollout; complete rollouts train and other discards stay out."""

    name: ClassVar[str]
    description: ClassVar[str]
    resumes: ClassVar[bool] = False  # whether the trainer should keep a cut rollout's state to resume

    def admit(self, trajectory: Trajectory, reason: str | None) -> Admission:
        """The fate of `trajectory`, whose failure-policy verdict is `reason` (None: usable)."""
        if reason is None:
            return Admission("train", float(trajectory.rollout.reward), True)  # type: ignore[arg-type]
        return self.partial(trajectory) if is_partial(trajectory) else DISCARD

    @abstractmethod
    def partial(self, trajectory: Trajectory) -> Admission:
        """The fate of a partial rollout."""


@dataclass(slots=True)
class PartialReport:
    """Per batch: partial rollouts by reason and by what the policy did with them, and the GRPO groups
    that lost members (dropped ones are `BatchStats.groups_dropped`, as before)."""

    policy: str = "discard"
    partial: int = 0
    reasons: Counter[str] = field(default_factory=Counter)
    actions: Counter[str] = field(default_factory=Counter)
    held: int = 0  # complete members of a carried group, waiting for it
    groups_short: int = 0  # groups that lost members (whatever is left of them: all, some or none)
    members_lost: int = 0  # the members those groups lost

    def add(self, reason: str | None, admission: Admission, partial: bool) -> None:
        if partial:
            self.partial += 1
            self.reasons[str(reason)] += 1
            self.actions[admission.action] += 1
