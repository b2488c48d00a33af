"""The Claw-Eval Inspect task: runnable samples, per-sample mock-service worlds, the loop, the scorer."""

from __future__ import annotations

from pathlib import Path

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import GenerateConfig
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.tool import Tool

from forge_eval._errors import UnknownNameError, UsageError
from forge_eval.benchmarks._world import drop_world, open_world, sample_agent
from forge_eval.benchmarks.claweval._data import (
    ClawTask,
    data_root,
    initial_states,
    load_tasks,
    skip_reason,
)
from forge_eval.benchmarks.claweval._judge import JUDGE_MAX_TOKENS
from forge_eval.benchmarks.claweval._loop import system_prompt
from forge_eval.benchmarks.claweval._scorer import claweval_scorer
from forge_eval.benchmarks.claweval._services import CLAW_SERVICES
from forge_eval.benchmarks.claweval._tools import task_tools
from forge_eval.harnesses import HARNESSES

DEFAULT_HARNESS = "claw-loop"
SUBSETS = ("all", "general", "multimodal", "multi_turn")
#: Seconds added to the longest task timeout for the Inspect backstop limit (judge calls, setup).
SCORING_MARGIN_S = 300


def to_sample(root: Path, spec: ClawTask) -> Sample:
    return Sample(
        id=spec.task_id,
        input=spec.prompt.text,
        metadata={
            "data_root": str(root),
            "category": spec.category,
            "difficulty": spec.difficulty,
            "split": spec.split,
            "language": spec.language,
            "services": [s.name for s in spec.services],
            "max_turns": spec.environment.max_turns,
            "timeout_seconds": spec.environment.timeout_seconds,
        },
    )


def select_tasks(root: Path, subset: str = "all", task_ids: str | None = None) -> list[ClawTask]:
    """Tasks of a split or listed ids, runnable or not (callers separate the skipped ones)."""
    tasks = load_tasks(root)
    if task_ids:
        by_id = {t.task_id: t for t in tasks}
        wanted = [i.strip() for i in task_ids.split(",") if i.strip()]
        for task_id in wanted:
            if task_id not in by_id:
                raise UnknownNameError("Claw-Eval task", task_id, list(by_id))
        return [by_id[i] for i in wanted]
    if subset not in SUBSETS:
        raise UsageError(f"unknown Claw-Eval subset '{subset}'", hint=f"use one of: {', '.join(SUBSETS)}")
    return [t for t in tasks if subset == "all" or t.split == subset]


def skipped_tasks(root: Path, subset: str = "all", task_ids: str | None = None) -> dict[str, str]:
    """Task id -> why it cannot run here, for the chosen tasks."""
    return {t.task_id: r for t in select_tasks(root, subset, task_ids) if (r := skip_reason(root, t))}


def runnable_samples(root: Path, subset: str = "all", task_ids: str | None = None) -> list[Sample]:
    chosen = [t for t in select_tasks(root, subset, task_ids) if skip_reason(root, t) is None]
    if not chosen:
        raise UsageError(
            "none of the chosen Claw-Eval tasks can run here",
            hint="see `forge-eval` skipped reasons; mock-service tasks of the general split run offline",
        )
    return [to_sample(root, t) for t in chosen]


def _spec(state: TaskState) -> ClawTask:
    root = Path(state.metadata["data_root"])
    return next(t for t in load_tasks(root) if t.task_id == state.sample_id)


@solver
def claweval_setup() -> Solver:
    """Start the mock services (once per process) and load this sample's fixtures into a fresh world."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        states = initial_states(Path(state.metadata["data_root"]), _spec(state))
        await open_world(state, {service: (s, []) for service, s in states.items()}, CLAW_SERVICES)
        return state

    return solve


@solver
def claweval_agent(harness: str = DEFAULT_HARNESS) -> Solver:
    """The harness's solver, built per sample with that task's own tools and the OpenClaw-style prompt."""

    def setup(state: TaskState) -> tuple[list[Tool], str]:
        tools = task_tools(_spec(state))
        return tools, system_prompt(tools)

    return sample_agent(harness, setup)


@task
def claweval(
    seed: int = 0,
    harness: str = DEFAULT_HARNESS,
    subset: str = "all",
    task_ids: str | None = None,
    data_dir: str | None = None,
    max_tokens: int | None = None,
    judge_max_tokens: int = JUDGE_MAX_TOKENS,
    max_turns: int | None = None,
) -> Task:
    """Claw-Eval (claw-eval/claw-eval @ 9365e1a): the tasks whose mock services run here.

    Args:
        seed: Sampling seed passed to the model.
        harness: Harness name (default: Claw-Eval's own loop, "claw-loop").
        subset: all, general, multimodal or multi_turn.
        task_ids: Comma-separated task ids (overrides `subset`).
        data_dir: The benchmark folder or the upstream repository root (default: cache/download).
        max_tokens: Most tokens per model reply (None = the model's default, as upstream).
        judge_max_tokens: Reply cap of the judge (upstream 8192).
        max_turns: Cap on each task's own `max_turns` (smoke tests on slow models; None = official).
    """
    root = data_root(data_dir)
    samples = runnable_samples(root, subset, task_ids)
    if max_turns is not None:
        for sample in samples:
            assert sample.metadata is not None
            sample.metadata["max_turns"] = min(sample.metadata["max_turns"], max_turns)
    HARNESSES.get(harness)
    longest = max(s.metadata["timeout_seconds"] for s in samples if s.metadata)
    return Task(
        dataset=MemoryDataset(samples, name="claweval"),
        setup=claweval_setup(),
        solver=claweval_agent(harness),
        scorer=claweval_scorer(judge_max_tokens=judge_max_tokens),
        cleanup=drop_world,
        config=GenerateConfig(seed=seed, max_tokens=max_tokens),
        time_limit=longest + SCORING_MARGIN_S,
        name="claweval",
        metadata={"benchmark": "claweval", "seed": seed, "harness": harness},
    )
