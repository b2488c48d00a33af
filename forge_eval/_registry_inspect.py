"""Inspect entry point (`[project.entry-points.inspect_ai]`): registers forge-eval's @task functions,
so that `inspect eval forge_eval/forgelab -T seed=1` works."""

from forge_eval.benchmarks.forgelab import forgelab

__all__ = ["forgelab"]
