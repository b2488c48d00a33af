"""`carry`: resume a partial rollout in the next step from its recorded state, where the harness can.

Its group waits for it (slime and Agent Lightning carry unfinished groups over): the batch leaves the
partial rollout and its group's finished members out and hands them back (`TrainingBatch.carried`,
`.held`), and the trainer resumes the one and re-submits the others with the resumed rollout next step.
Whether a rollout can be resumed is the trainer's to say (`resumable`): it needs the harness's state at
the cut, which the proxy's records alone do not hold. A rollout that cannot be resumed is discarded.
"""

from collections.abc import Callable
from dataclasses import dataclass

from forge_eval.training.partial._partial import DISCARD, Admission, PartialPolicy
from forge_eval.training.trajectories import Trajectory


def _never(trajectory: Trajectory) -> bool:
    return False


@dataclass(frozen=True)
class Carry(PartialPolicy):
    """Carries what `resumable` says the trainer can resume (it holds the harness state at the cut)."""

    name = "carry"
    description = (
        "a partial rollout is resumed next step from its recorded state, its group waiting; else discard"
    )
    resumes = True
    resumable: Callable[[Trajectory], bool] = _never

    def partial(self, trajectory: Trajectory) -> Admission:
        return Admission("carry") if self.resumable(trajectory) else DISCARD
