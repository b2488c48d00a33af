"""The QwenClawBench Inspect task: the task's files staged into the OpenClaw workspace, the run's
workspace and transcript handed back by the harness, then `grade()` and the judge (hybrid score).

Upstream starts `openclaw agent` in a fresh container whose workspace holds the task's files; here
the `openclaw` harness (`openclaw agent exec` in the local sandbox) gets the same files through its
`stage` option and keeps the workspace for the scorer (`keep_workspace`). The transcript `grade()`
and the judge read is the conversation OpenClaw sent through the proxy, as OpenClaw session events.
"""

from __future__ import annotations

import asyncio
import copy
from pathlib import Path
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import GenerateConfig, messages_from_openai
from inspect_ai.scorer import Score, Scorer, Target, mean, scorer, stderr
from inspect_ai.solver import Generate, Solver, TaskState, solver

from forge_eval._errors import UnknownNameError, UsageError
from forge_eval.benchmarks._judge import ModelJudge
from forge_eval.benchmarks.qwenclawbench._data import (
    QwenTask,
    data_root,
    load_tasks,
    skip_reason,
    stage_workspace,
)
from forge_eval.benchmarks.qwenclawbench._grade import run_grade, session_events
from forge_eval.benchmarks.qwenclawbench._judge import JUDGE_MAX_TOKENS, judge_prompt, judge_total
from forge_eval.benchmarks.qwenclawbench._scoring import AUTO_GATE, automated_score, task_score, weights
from forge_eval.harnesses import HARNESSES, ExternalHarness, kept_workspace, release_workspace

DEFAULT_HARNESS = "openclaw"
#: Seconds added to the task timeout for the Inspect backstop limit (grade(), judge call, staging).
SCORING_MARGIN_S = 300


def to_sample(root: Path, spec: QwenTask) -> Sample:
    return Sample(
        id=spec.task_id,
        input=spec.prompt,
        metadata={
            "data_root": str(root),
            "category": spec.category,
            "grading_type": spec.grading_type,
            "timeout_seconds": spec.timeout_seconds,
            "grading_weights": spec.grading_weights,
        },
    )


def select_tasks(root: Path, task_ids: str | None = None) -> tuple[QwenTask, ...]:
    """The listed tasks (comma-separated ids; all when None), runnable or not."""
    tasks = load_tasks(root)
    if not task_ids:
        return tasks
    by_id = {t.task_id: t for t in tasks}
    wanted = [i.strip() for i in task_ids.split(",") if i.strip()]
    for task_id in wanted:
        if task_id not in by_id:
            raise UnknownNameError("QwenClawBench task", task_id, list(by_id))
    return tuple(by_id[i] for i in wanted)


def runnable_samples(root: Path, task_ids: str | None = None) -> list[Sample]:
    """The chosen tasks (all by default) that can run here."""
    chosen = [t for t in select_tasks(root, task_ids) if skip_reason(root, t) is None]
    if not chosen:
        raise UsageError(
            "none of the chosen QwenClawBench tasks can run here",
            hint="see the skipped reasons (external dependencies, files missing from this data copy)",
        )
    return [to_sample(root, t) for t in chosen]


def _spec(state: TaskState) -> tuple[Path, QwenTask]:
    root = Path(state.metadata["data_root"])
    return root, next(t for t in load_tasks(root) if t.task_id == state.sample_id)


def _stage(state: TaskState, work: Path) -> None:
    root, spec = _spec(state)
    stage_workspace(root, spec, work)


def external(harness: str) -> ExternalHarness:
    """The harness, which must run its own program in a workspace (the task's files live there)."""
    chosen = HARNESSES.get(harness)
    if not isinstance(chosen, ExternalHarness):
        external_names = [n for n, h in HARNESSES.items() if isinstance(h, ExternalHarness)]
        raise UsageError(
            f"QwenClawBench needs a harness that works in a file workspace; '{harness}' does not",
            hint=f"use --harness {DEFAULT_HARNESS} (official) or one of: {', '.join(external_names)}",
        )
    return chosen


@solver
def qwenclawbench_agent(harness: str = DEFAULT_HARNESS, timeout_multiplier: float = 1.0) -> Solver:
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


async def _judge(spec: QwenTask, events: list[dict[str, Any]], max_tokens: int) -> tuple[float, str]:
    verdict = await ModelJudge.from_role(max_tokens=max_tokens).verdict(judge_prompt(spec, events))
    return judge_total(verdict), str(verdict.get("notes", ""))


@scorer(metrics=[mean(), stderr()])
def qwenclawbench_scorer(judge_max_tokens: int = JUDGE_MAX_TOKENS, simple: bool = False) -> Scorer:
    """One run's task score: `grade()` on the kept workspace and transcript, the judge when its score
    can count (hybrid tasks whose automated score passes the gate, or any with `simple`)."""

    async def score(state: TaskState, target: Target) -> Score:
        _, spec = _spec(state)
        kept = kept_workspace(state)
        if kept is None:
            return Score(value=0.0, explanation="the harness handed back no workspace (it did not finish)")
        events = session_events(await messages_from_openai(kept.conversation))
        outcome = await asyncio.to_thread(run_grade, spec.grading_code, events, kept.work)
        auto = automated_score(outcome.scores)
        llm, notes = None, ""
        judged = spec.grading_type == "llm_judge" or (
            spec.grading_type == "hybrid" and weights(spec.grading_weights)[1] > 0
            and (simple or auto >= AUTO_GATE)
        )
        if judged:
            llm, notes = await _judge(spec, events, judge_max_tokens)
        value = task_score(spec.grading_type, auto, llm or 0.0, spec.grading_weights, simple)
        return Score(
            value=value,
            answer=state.output.completion,
            explanation=outcome.error or notes or f"s_auto={auto:.3f}",
            metadata={
                "s_auto": auto,
                "s_llm": llm,
                "grade": outcome.scores,
                "grade_error": outcome.error,
                "judge_notes": notes,
                "tool_calls": sum(
                    1
                    for e in events
                    for c in e["message"]["content"]
                    if isinstance(c, dict) and c.get("type") == "toolCall"
                ),
            },
        )

    return score


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
    root = data_root(data_dir)
    samples = runnable_samples(root, task_ids)
    if timeout_multiplier <= 0:
        raise UsageError(f"timeout_multiplier must be > 0, got {timeout_multiplier}")
    longest = max(s.metadata["timeout_seconds"] for s in samples if s.metadata) * timeout_multiplier
    return Task(
        dataset=MemoryDataset(samples, name="qwenclawbench"),
        solver=qwenclawbench_agent(harness, timeout_multiplier),
        scorer=qwenclawbench_scorer(judge_max_tokens=judge_max_tokens, simple=simple),
        cleanup=release_workspace,
        config=GenerateConfig(seed=seed),
        time_limit=int(longest) + SCORING_MARGIN_S,
        name="qwenclawbench",
        metadata={"benchmark": "qwenclawbench", "seed": seed, "harness": harness},
    )
