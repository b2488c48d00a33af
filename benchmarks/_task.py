"""The tail every benchmark's Inspect task shares: `benchmark_task(...)`.

It owns what must be the same in every benchmark: the harness lookup (an unknown name fails before any
sample runs), the seed reaching the model (`GenerateConfig(seed=)`, merged with the benchmark's own
generate settings), the dataset of the runnable samples (`NothingRunnableError` when there are none) and
the task metadata the run directory reads (`benchmark`, `seed`, `harness`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from inspect_ai import Task
from inspect_ai.dataset import MemoryDataset
from inspect_ai.model import GenerateConfig
from inspect_ai.scorer import Scorer
from inspect_ai.solver import Generate, Solver, TaskState
from inspect_ai.tool import Tool

from forge_eval.benchmarks._selection import Selection
from forge_eval.harnesses import HARNESSES, Harness


def benchmark_task(
    name: str,
    selection: Selection,
    *,
    seed: int,
    harness: str,
    agent: Callable[[Harness], Solver],
    scorer: Scorer | Sequence[Scorer],
    setup: Solver | None = None,
    cleanup: Callable[[TaskState], Awaitable[None]] | None = None,
    config: GenerateConfig | None = None,
    message_limit: int | None = None,
    time_limit: int | None = None,
    metadata: Mapping[str, Any] | None = None,
) -> Task:
    """One benchmark task for one seed.

    Args:
        name: The benchmark's name (task and dataset name, `benchmark` in the metadata).
        selection: The chosen tasks (`Benchmark.select_function`); its runnable samples are the dataset.
        seed: Sampling seed, passed to the model (one task per seed makes seeds distinct runs).
        harness: Harness name from `forge_eval.harnesses.HARNESSES`.
        agent: The sample's solver, given the harness (e.g. `lambda h: sample_agent(h, setup)`).
        scorer: The benchmark's scorer(s).
        setup: Per-sample setup solver (worlds, browser episodes, ...).
        cleanup: Per-sample cleanup, after scoring.
        config: The benchmark's own generate settings (reply cap, ...); the seed is added to them.
        message_limit: Messages per sample before the agent is stopped.
        time_limit: Seconds per sample before the agent is stopped.
        metadata: More task metadata (a version, a variant).

    Raises:
        UnknownNameError: an unknown harness.
        NothingRunnableError: none of the chosen tasks can run here.
    """
    chosen = HARNESSES.get(harness)
    samples = selection.runnable(name)
    return Task(
        dataset=MemoryDataset(samples, name=name),
        setup=setup,
        solver=agent(chosen),
        scorer=list(scorer) if isinstance(scorer, Sequence) else scorer,
        cleanup=cleanup,
        config=(config or GenerateConfig()).merge(GenerateConfig(seed=seed)),
        message_limit=message_limit,
        time_limit=time_limit,
        name=name,
        metadata={"benchmark": name, "seed": seed, "harness": harness, **(metadata or {})},
    )


def sample_agent(
    harness: Harness, setup: Callable[[TaskState], tuple[list[Tool], str]], **options: Any
) -> Solver:
    """The harness's solver, built per sample from the tools and system prompt `setup` gives for it
    (`options` go to the harness as they are)."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        tools, prompt = setup(state)
        return await harness.solver(tools=tools, system_prompt=prompt, **options)(state, generate)

    return solve
