"""The QwenClawBench scorer: `grade()` on the kept workspace and transcript, the judge, the hybrid score.

The transcript `grade()` and the judge read is the conversation OpenClaw sent through the proxy, as
OpenClaw session events.
"""

from __future__ import annotations

import asyncio
from typing import Any

from inspect_ai.model import messages_from_openai
from inspect_ai.scorer import Score, Scorer, Target, mean, scorer, stderr
from inspect_ai.solver import TaskState

from forge_eval.benchmarks._judge import ModelJudge
from forge_eval.benchmarks.qwenclawbench._data import QwenTask, sample_task
from forge_eval.benchmarks.qwenclawbench._grade import run_grade, session_events
from forge_eval.benchmarks.qwenclawbench._judge import JUDGE, JUDGE_MAX_TOKENS, judge_prompt, judge_total
from forge_eval.benchmarks.qwenclawbench._scoring import AUTO_GATE, automated_score, task_score, weights
from forge_eval.harnesses import kept_workspace


async def _judge(spec: QwenTask, events: list[dict[str, Any]], max_tokens: int) -> tuple[float, str]:
    verdict = await ModelJudge.from_role(JUDGE, max_tokens=max_tokens).verdict(judge_prompt(spec, events))
    return judge_total(verdict), str(verdict.get("notes", ""))


@scorer(metrics=[mean(), stderr()])
def qwenclawbench_scorer(judge_max_tokens: int = JUDGE_MAX_TOKENS, simple: bool = False) -> Scorer:
    """One run's task score: `grade()` on the kept workspace and transcript, the judge when its score
    can count (hybrid tasks whose automated score passes the gate, or any with `simple`)."""

    async def score(state: TaskState, target: Target) -> Score:
        _, spec = sample_task(state)
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
