"""`discard`: the paper's choice and the default: a partial rollout leaves the batch and its group."""

from dataclasses import dataclass

from forge_eval.training.partial._partial import DISCARD, Admission, PartialPolicy
from forge_eval.training.trajectories import Trajectory


@dataclass(frozen=True)
class Discard(PartialPolicy):
    name = "discard"
    description = "a partial rollout is dropped; its group's baseline is over the finished members"

    def partial(self, trajectory: Trajectory) -> Admission:
        return DISCARD
