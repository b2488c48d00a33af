"""`broadcast`: Eq. (1) — every recorded call learns, with r_t = gamma^(T-t) * r_T."""

from dataclasses import dataclass

from forge_eval.training.credit._credit import CreditVariant
from forge_eval.training.trajectories import Trajectory


@dataclass(frozen=True)
class Broadcast(CreditVariant):
    name = "broadcast"
    description = "Eq. (1): every recorded call learns, r_t = gamma^(T-t) * r_T (gamma=1 by default)"

    def loss_mask(self, trajectory: Trajectory) -> list[bool]:
        return [True] * len(trajectory.calls)
