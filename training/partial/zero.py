"""`zero`: keep the prefix with reward 0, as Agent Lightning's `reward_fillna_value` does.

The prefix's calls learn with the advantage of reward 0 in their group, usually negative: a correct
prefix cut by a crash is pushed down (the concern the paper's referee raised).
"""

from dataclasses import dataclass

from forge_eval.training.partial._partial import Admission, PartialPolicy
from forge_eval.training.trajectories import Trajectory


@dataclass(frozen=True)
class Zero(PartialPolicy):
    name = "zero"
    description = "a partial rollout keeps its calls with reward 0: in its group's baseline, and it learns"

    def partial(self, trajectory: Trajectory) -> Admission:
        return Admission("zero", 0.0, True)
