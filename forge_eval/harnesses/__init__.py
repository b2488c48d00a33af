"""Harnesses: the agent loops benchmarks run in, registered by name in `HARNESSES`."""

from forge_eval._registry import Registry
from forge_eval.harnesses._harness import Harness
from forge_eval.harnesses._react import ReactHarness
from forge_eval.harnesses._seeding import epoch_seed_for, seed_per_epoch

HARNESSES: Registry[Harness] = Registry("harness")
HARNESSES.register(ReactHarness.name, ReactHarness())

__all__ = ["HARNESSES", "Harness", "ReactHarness", "epoch_seed_for", "seed_per_epoch"]
