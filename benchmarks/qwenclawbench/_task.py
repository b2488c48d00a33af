"""The QwenClawBench Inspect task: the task's files staged into the OpenClaw workspace, OpenClaw run with
upstream's own `openclaw.json`, its workspace and home (with OpenClaw's session log) handed back for
upstream's grading.

Upstream starts `openclaw agent` in a fresh container whose workspace holds the task's files and whose
`~/.openclaw` holds its `openclaw_config`; here the `openclaw` harness (`openclaw agent exec` in the
local sandbox) runs with that config read from the pinned tree, only its provider pointed at the
sample's proxy (`OpenClawHarness.with_config`; and less its `brave` web-search provider, a plugin the
pinned OpenClaw lacks: `_upstream.local_config`), gets the same files through its `stage` option, is sent
the task's prompt alone (`bare_prompt`) and keeps the workspace and home for the scorer.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from inspect_ai import Task, task
from inspect_ai.solver import Generate, Solver, TaskState, solver

from forge_eval._errors import UsageError
from forge_eval.benchmarks._task import benchmark_task
from forge_eval.benchmarks.qwenclawbench._data import data_root, sample_task, select_tasks, stage_workspace
from forge_eval.benchmarks.qwenclawbench._scorer import qwenclawbench_scorer
from forge_eval.benchmarks.qwenclawbench._upstream import local_config, openclaw_config, upstream_tree
from forge_eval.harnesses import Harness, OpenClawHarness, release_workspace

DEFAULT_HARNESS = "openclaw"
#: Seconds added to the task timeout for the Inspect backstop limit (grade(), judge call, staging).
SCORING_MARGIN_S = 300


def _stage(state: TaskState, work: Path) -> None:
    root, spec = sample_task(state)
    stage_workspace(root, spec, work)


def openclaw(harness: Harness) -> OpenClawHarness:
    """The harness, which must be OpenClaw: upstream's grading reads OpenClaw's own session log."""
    if not isinstance(harness, OpenClawHarness):
        raise UsageError(
            f"QwenClawBench runs OpenClaw: its grading reads OpenClaw's session log; '{harness.name}' is "
            "not OpenClaw",
            hint=f"use --harness {DEFAULT_HARNESS}",
        )
    return harness


@solver
def qwenclawbench_agent(
    harness: Harness, timeout_multiplier: float = 1.0, config: dict[str, Any] | None = None
) -> Solver:
    """OpenClaw with `config` (upstream's `openclaw.json`) in a workspace holding the task's files; the
    workspace is kept for the scorer.

    Like upstream, the harness may run for the task's `timeout_seconds` (1800 s for every v1.1 task)
    times `timeout_multiplier`, not for the harness's own default.
    """
    chosen = openclaw(harness)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        # the registered harness is shared: config and limit are set on a copy
        timed = chosen.with_config(config)
        timed.timeout_s = state.metadata["timeout_seconds"] * timeout_multiplier  # type: ignore[misc]
        # as upstream: the task's prompt alone, no extra tools, no benchmark system prompt
        inner = timed.solver(tools=[], system_prompt="", stage=_stage, keep_workspace=True, bare_prompt=True)
        return await inner(state, generate)

    return solve


@task
def qwenclawbench(
    seed: int = 0,
    harness: str = DEFAULT_HARNESS,
    task_ids: str | None = None,
    data_dir: str | None = None,
    judge_max_tokens: int | None = None,
    simple: bool = False,
    timeout_multiplier: float = 1.0,
) -> Task:
    """QwenClawBench v1.1 (SKYLENAGE-AI/QwenClawBench @ e4eefcf): the local-workspace tasks.

    Args:
        seed: Sampling seed passed to the model.
        harness: An external harness (default and official: "openclaw").
        task_ids: Comma-separated task ids (default: every task that can run here).
        data_dir: The benchmark folder or the upstream repository root (default: cache/download).
        judge_max_tokens: Cap on the judge's replies below upstream's 20480 (a smoke-test judge; the
            protocol record then says the judge differs).
        simple: Upstream `--simple-scoring`: no s_auto >= 0.75 gate on the judge's share.
        timeout_multiplier: Upstream `--timeout-multiplier`: the harness may run each task's
            `timeout_seconds` times this.
    """
    if timeout_multiplier <= 0:
        raise UsageError(f"timeout_multiplier must be > 0, got {timeout_multiplier}")
    selection = select_tasks(data_dir, task_ids)
    config = local_config(openclaw_config(upstream_tree(data_root(data_dir))))
    timeouts = [s.metadata["timeout_seconds"] for s in selection.samples if s.metadata]
    return benchmark_task(
        "qwenclawbench",
        selection,
        seed=seed,
        harness=harness,
        agent=lambda chosen: qwenclawbench_agent(chosen, timeout_multiplier, config),
        scorer=qwenclawbench_scorer(simple=simple, judge_max_tokens=judge_max_tokens),
        cleanup=release_workspace,
        time_limit=int(max(timeouts, default=0) * timeout_multiplier) + SCORING_MARGIN_S,
    )
