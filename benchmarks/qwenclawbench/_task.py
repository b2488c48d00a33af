"""The QwenClawBench Inspect task: the task's files staged into the OpenClaw workspace, the run's
workspace and transcript handed back by the harness for the scorer (`grade()` and the judge).

Upstream starts `openclaw agent` in a fresh container whose workspace holds the task's files; here
the `openclaw` harness (`openclaw agent exec` in the local sandbox) gets the same files through its
`stage` option and keeps the workspace for the scorer (`keep_workspace`). The transcript `grade()`
and the judge read is the conversation OpenClaw sent through the proxy, as OpenClaw session events.
"""

from __future__ import annotations

import copy
from pathlib import Path

from inspect_ai import Task, task
from inspect_ai.solver import Generate, Solver, TaskState, solver

from forge_eval._errors import UsageError
from forge_eval.benchmarks._task import benchmark_task
from forge_eval.benchmarks.qwenclawbench._data import sample_task, select_tasks, stage_workspace
from forge_eval.benchmarks.qwenclawbench._judge import JUDGE_MAX_TOKENS
from forge_eval.benchmarks.qwenclawbench._scorer import qwenclawbench_scorer
from forge_eval.harnesses import HARNESSES, ExternalHarness, Harness, release_workspace

DEFAULT_HARNESS = "openclaw"
#: Seconds added to the task timeout for the Inspect backstop limit (grade(), judge call, staging).
SCORING_MARGIN_S = 300


def _stage(state: TaskState, work: Path) -> None:
    root, spec = sample_task(state)
    stage_workspace(root, spec, work)


def external(harness: Harness) -> ExternalHarness:
    """The harness, which must run its own program in a workspace (the task's files live there)."""
    if not isinstance(harness, ExternalHarness):
        external_names = [n for n, h in HARNESSES.items() if isinstance(h, ExternalHarness)]
        raise UsageError(
            f"QwenClawBench needs a harness that works in a file workspace; '{harness.name}' does not",
            hint=f"use --harness {DEFAULT_HARNESS} (official) or one of: {', '.join(external_names)}",
        )
    return harness


@solver
def qwenclawbench_agent(harness: Harness, timeout_multiplier: float = 1.0) -> Solver:
    """The harness in a workspace holding the task's files; the workspace is kept for the scorer.

    Like upstream, the harness may run for the task's `timeout_seconds` (1800 s for every v1.1 task)
    times `timeout_multiplier`, not for the harness's own default.
    """
    chosen = external(harness)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        timed = copy.copy(chosen)  # the registered harness is shared: the limit is set on a copy
        timed.timeout_s = state.metadata["timeout_seconds"] * timeout_multiplier  # type: ignore[misc]
        # the official run gives OpenClaw the task prompt alone: no extra tools, no benchmark system prompt
        inner = timed.solver(tools=[], system_prompt="", stage=_stage, keep_workspace=True)
        return await inner(state, generate)

    return solve


@task
def qwenclawbench(
    seed: int = 0,
    harness: str = DEFAULT_HARNESS,
    task_ids: str | None = None,
    data_dir: str | None = None,
    judge_max_tokens: int = JUDGE_MAX_TOKENS,
    simple: bool = False,
    timeout_multiplier: float = 1.0,
) -> Task:
    """QwenClawBench v1.1 (SKYLENAGE-AI/QwenClawBench @ e4eefcf): the local-workspace tasks.

    Args:
        seed: Sampling seed passed to the model.
        harness: An external harness (default and official: "openclaw").
        task_ids: Comma-separated task ids (default: every task that can run here).
        data_dir: The benchmark folder or the upstream repository root (default: cache/download).
        judge_max_tokens: Reply cap of the judge (upstream 20480).
        simple: Upstream `--simple-scoring`: no s_auto >= 0.75 gate on the judge's share.
        timeout_multiplier: Upstream `--timeout-multiplier`: the harness may run each task's
            `timeout_seconds` times this.
    """
    if timeout_multiplier <= 0:
        raise UsageError(f"timeout_multiplier must be > 0, got {timeout_multiplier}")
    selection = select_tasks(data_dir, task_ids)
    timeouts = [s.metadata["timeout_seconds"] for s in selection.samples if s.metadata]
    return benchmark_task(
        "qwenclawbench",
        selection,
        seed=seed,
        harness=harness,
        agent=lambda chosen: qwenclawbench_agent(chosen, timeout_multiplier),
        scorer=qwenclawbench_scorer(judge_max_tokens=judge_max_tokens, simple=simple),
        cleanup=release_workspace,
        time_limit=int(max(timeouts, default=0) * timeout_multiplier) + SCORING_MARGIN_S,
    )
