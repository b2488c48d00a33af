"""The QwenClawBench scorer: upstream's own grading of the run OpenClaw handed back.

`grade_task` of upstream's `scripts/lib_grading.py` (from the pinned tree, in a child interpreter:
`_upstream.grade_run`) gets what upstream's runner gives it: OpenClaw's own session JSONL read from the
sample's sandbox home by upstream's `_load_transcript`, and the workspace the agent left. It runs the
task's `grade()`, upstream's judge (prompt builder, transcript summary, retries, fallback) with the
model bound to Inspect's `judge` role, and the hybrid combination; the run's score is its `score`
(`score_simple` with `simple`, upstream's `--simple-scoring`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from inspect_ai.model import get_model
from inspect_ai.scorer import Score, Scorer, Target, mean, scorer, stderr
from inspect_ai.solver import TaskState

from forge_eval.benchmarks._judge import JUDGE_ROLE
from forge_eval.benchmarks.qwenclawbench._data import sample_task
from forge_eval.benchmarks.qwenclawbench._upstream import grade_run, judge_endpoint, upstream_tree
from forge_eval.harnesses import kept_workspace


def _tool_calls(transcript: list[dict[str, Any]]) -> int:
    return sum(
        1
        for event in transcript
        if event.get("type") == "message"
        for item in event.get("message", {}).get("content") or []
        if isinstance(item, dict) and item.get("type") == "toolCall"
    )


@scorer(metrics=[mean(), stderr()])
def qwenclawbench_scorer(simple: bool = False, judge_max_tokens: int | None = None) -> Scorer:
    """One run's task score by upstream's `grade_task` (module doc); `judge_max_tokens` caps the judge's
    replies below upstream's 20480 (a smoke-test judge; the protocol record says so)."""

    async def score(state: TaskState, target: Target) -> Score:
        root, spec = sample_task(state)
        kept = kept_workspace(state)
        if kept is None:
            return Score(value=0.0, explanation="the harness handed back no workspace (it did not finish)")
        judge = get_model(role=JUDGE_ROLE)
        async with judge_endpoint(judge, judge_max_tokens) as (url, key):
            graded = await grade_run(
                upstream_tree(root),
                Path(spec.path),
                home=kept.home,
                workspace=kept.work,
                judge_url=url,
                judge_key=key,
            )
        grade = graded.grade or {}
        automated, judged = graded.automated or {}, graded.llm_judge or {}
        return Score(
            value=graded.score(simple),
            answer=state.output.completion,
            explanation=graded.error or grade.get("notes") or f"score {graded.score(simple):.3f}",
            metadata={
                "s_auto": automated.get("score"),
                "s_llm": judged.get("score"),
                "score": grade.get("score"),
                "score_simple": grade.get("score_simple"),
                "grade": automated.get("breakdown"),
                "judge": judged.get("breakdown"),
                "judge_notes": judged.get("notes", ""),
                "grade_error": graded.error,
                "transcript_events": len(graded.transcript),
                "compactions": sum(1 for e in graded.transcript if e.get("type") == "compaction"),
                "tool_calls": _tool_calls(graded.transcript),
                "upstream_log": graded.log[-2000:],
            },
        )

    return score
