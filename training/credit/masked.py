"""`masked`: only the policy's task calls (action/answer) learn; harness-internal calls are masked out."""

from dataclasses import dataclass

from forge_eval.training.credit._credit import TASK_ROLES, CreditVariant
from forge_eval.training.trajectories import Trajectory


@dataclass(frozen=True)
class Masked(CreditVariant):
    name = "masked"
    description = "only action/answer calls carry loss; title, compaction, subagent, planner, aux are masked"

    def loss_mask(self, trajectory: Trajectory) -> list[bool]:
        return [role in TASK_ROLES for role in trajectory.roles]
