"""The Claw-Eval Inspect task: each sample is one trial of upstream's own `claw-eval batch` (`_trial.py`)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from inspect_ai import Task, task
from inspect_ai.model import GenerateConfig
from inspect_ai.solver import Solver

from forge_eval._errors import ForgeError
from forge_eval.benchmarks._task import benchmark_task
from forge_eval.benchmarks.claweval._data import data_root, select_tasks
from forge_eval.benchmarks.claweval._scorer import claweval_scorer
from forge_eval.benchmarks.claweval._trial import upstream_trial
from forge_eval.harnesses import ClawLoopHarness, Harness

DEFAULT_HARNESS = "claw-loop"
#: Seconds added to the longest task timeout for the Inspect backstop limit (services, grading, judge).
SCORING_MARGIN_S = 600


def _agent(tree: Path, sandbox: bool) -> Callable[[Harness], Solver]:
    def agent(harness: Harness) -> Solver:
        if not isinstance(harness, ClawLoopHarness):
            raise ForgeError(
                f"Claw-Eval runs in upstream's own loop (harness {DEFAULT_HARNESS!r}), not {harness.name!r}",
                hint=f"drop --harness or pass --harness {DEFAULT_HARNESS}",
            )
        return upstream_trial(tree, sandbox=sandbox)

    return agent


@task
def claweval(
    seed: int = 0,
    harness: str = DEFAULT_HARNESS,
    subset: str = "all",
    task_ids: str | None = None,
    data_dir: str | None = None,
    max_tokens: int | None = None,
    sandbox: str = "bwrap",
    images: bool = False,
) -> Task:
    """Claw-Eval (claw-eval/claw-eval @ 9365e1a) as upstream runs it: the tasks whose needs are met here.

    Args:
        seed: Sampling seed passed to the model.
        harness: Harness name (only Claw-Eval's own loop, "claw-loop", runs it).
        subset: all, general, multimodal or multi_turn.
        task_ids: Comma-separated task ids (overrides `subset`).
        data_dir: The pinned upstream tree (or a folder holding it; default: cache/download).
        max_tokens: Most tokens per model reply (None = none sent, as upstream).
        sandbox: "bwrap": upstream's sandbox server and tools in every trial, in our bubblewrap sandbox
            (as upstream's official `batch --sandbox` in Docker); "none": no sandbox tools (`batch`).
        images: The agent, judge and user models see images: run the multimodal tasks.
    """
    selection = select_tasks(data_dir, subset, task_ids, sandbox, images)
    longest = max((s.metadata["timeout_seconds"] for s in selection.samples if s.metadata), default=0)
    return benchmark_task(
        "claweval",
        selection,
        seed=seed,
        harness=harness,
        agent=_agent(data_root(data_dir), sandbox == "bwrap"),
        scorer=claweval_scorer(),
        config=GenerateConfig(max_tokens=max_tokens),
        time_limit=longest + SCORING_MARGIN_S,
    )
