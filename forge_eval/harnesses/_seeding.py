"""Give every epoch its own sampling seed.

Inspect sends the same `GenerateConfig.seed` in every epoch (verified on the wire), so K epochs at a
fixed seed would be K copies of one trial. This solver derives a distinct seed per epoch from the task's
seed and makes it the sample's active generate config. Inspect exposes no public setter for a
per-sample config, hence the private import.
"""

from inspect_ai.model import GenerateConfig
from inspect_ai.model._generate_config import active_generate_config, set_active_generate_config
from inspect_ai.solver import Generate, Solver, TaskState, solver

#: Epoch e of run seed s samples with seed s + (e - 1) * EPOCH_STRIDE (epoch 1 keeps the run seed).
EPOCH_STRIDE = 1_000_003


def epoch_seed_for(seed: int, epoch: int) -> int:
    """The wire seed of `epoch` (1-based) in a run with seed `seed`."""
    return seed + (epoch - 1) * EPOCH_STRIDE


def run_seed_for(wire_seed: int, epoch: int) -> int:
    """The run seed whose `epoch` samples with `wire_seed` (the inverse of `epoch_seed_for`)."""
    return wire_seed - (epoch - 1) * EPOCH_STRIDE


@solver
def seed_per_epoch() -> Solver:
    """Set this sample's sampling seed from the task's seed and the sample's epoch."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        config = active_generate_config()
        if config.seed is not None:
            set_active_generate_config(
                config.merge(GenerateConfig(seed=epoch_seed_for(config.seed, state.epoch)))
            )
        return state

    return solve
