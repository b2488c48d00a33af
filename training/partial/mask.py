"""`mask`: keep the prefix in its group's baseline at reward 0, but give its calls no loss.

Masked members count for the baseline: veRL's GRPO takes every output a group returns into its mean and
std, so a prefix with an all-zero loss mask is the one way to keep a member there without training on it.
The finished members thus get the advantages they would get under `zero`, and the prefix is never pushed
down; `zero` against `mask` isolates the gradient on the prefix, `discard` against `mask` the baseline.
"""

from dataclasses import dataclass

from forge_eval.training.partial._partial import Admission, PartialPolicy
from forge_eval.training.trajectories import Trajectory


@dataclass(frozen=True)
class Mask(PartialPolicy):
    name = "mask"
    description = "a partial rollout counts at reward 0 in its group's baseline; its calls carry no loss"

    def partial(self, trajectory: Trajectory) -> Admission:
        return Admission("mask", 0.0, False)
