"""Harnesses: the agent loops benchmarks run in, registered by name in `HARNESSES`."""

from forge_eval._registry import Registry
from forge_eval.harnesses._harness import Harness
from forge_eval.harnesses._react import ReactHarness

HARNESSES: Registry[Harness] = Registry("harness")
HARNESSES.register(ReactHarness.name, ReactHarness())

__all__ = ["HARNESSES", "Harness", "ReactHarness"]
