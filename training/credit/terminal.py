"""`terminal`: only the final trainable call learns.

A loss mask, not a reward placement: putting the reward on the last call and zero on the others would give
the earlier calls of a *successful* rollout a negative GRPO advantage (reference rl-training.md §1.7).
"""

from dataclasses import dataclass

from forge_eval.training.credit._credit import CreditVariant, final_trainable
from forge_eval.training.trajectories import Trajectory


@dataclass(frozen=True)
class Terminal(CreditVariant):
    name = "terminal"
    description = "only the final trainable call (last action/answer) carries loss"

    def loss_mask(self, trajectory: Trajectory) -> list[bool]:
        last = final_trainable(trajectory)
        return [i == last for i in range(len(trajectory.calls))]
