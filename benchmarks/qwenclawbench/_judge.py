"""QwenClawBench's LLM judge: one strict call per run, JSON `{scores, total, notes}`.

Upstream asks its judge (claude-opus-4-5, temperature 0, max_tokens 20480) to grade a summarized
transcript (tool calls with arguments, the first 200 characters of each tool result, user turns)
against the task's rubric. The prompt below is ours with the same inputs and the same strictness
calibration; its hash is recorded with results.
"""

from __future__ import annotations

import json
from typing import Any

from forge_eval.benchmarks._judge import JudgeSetup
from forge_eval.benchmarks.qwenclawbench._data import QwenTask

OFFICIAL_JUDGE = "anthropic/claude-opus-4-5-20251101"
JUDGE_MAX_TOKENS = 20480
RESULT_PREVIEW = 200

TEMPLATE = """\
Grade an AI agent's work. Output one JSON object and nothing else: no tool calls, no prose, no code fences.
Grade strictly: 1.0 only for excellent work; an ordinary acceptable completion is about 0.6-0.7. Take \
points off for needless steps, verbose output and wasteful tool use.

## Task
{prompt}

## Expected Behavior
{expected}

## Agent Transcript (summarized)
{transcript}

## Grading Rubric
{rubric}

Score every rubric criterion from 0.0 to 1.0, then the overall total from 0.0 to 1.0.
JSON: {{"scores": {{"<criterion>": 0.0}}, "total": 0.0, "notes": "<short justification>"}}"""

JUDGE = JudgeSetup(
    prompts=(TEMPLATE,),
    origin="ours: a paraphrase of upstream's _build_judge_prompt",
    max_tokens=JUDGE_MAX_TOKENS,
    settings={"gate": "s_auto >= 0.75"},
)


def summarize(events: list[dict[str, Any]]) -> str:
    """Tool calls with arguments, tool-result previews and user turns, one line each."""
    lines = []
    for event in events:
        if event.get("type") != "message":
            continue
        message = event.get("message", {})
        role = message.get("role")
        content = message.get("content") or []
        if role == "assistant":
            lines += [
                f"Tool: {c.get('name')}({json.dumps(c.get('arguments', {}), ensure_ascii=False)})"
                for c in content
                if isinstance(c, dict) and c.get("type") == "toolCall"
            ]
        elif role == "toolResult" and content:
            lines.append(f"Result: {str(content[0])[:RESULT_PREVIEW]}")
        elif role == "user" and content:
            lines.append(f"User: {content[0]}")
    return "\n".join(lines)


def judge_prompt(task: QwenTask, events: list[dict[str, Any]]) -> str:
    rubric = task.llm_judge_rubric or "\n".join(f"- {c}" for c in task.grading_criteria)
    return TEMPLATE.format(
        prompt=task.prompt, expected=task.expected_behavior, transcript=summarize(events), rubric=rubric
    )


def judge_total(verdict: dict[str, Any]) -> float:
    """The verdict's total; else its single `score`; else the mean of its criterion scores; else 0."""
    for key in ("total", "score"):
        if isinstance(verdict.get(key), int | float):
            return min(max(float(verdict[key]), 0.0), 1.0)
    scores = verdict.get("scores")
    if isinstance(scores, dict):
        values = [
            float(v["score"] if isinstance(v, dict) else v)
            for v in scores.values()
            if isinstance(v, int | float) or (isinstance(v, dict) and isinstance(v.get("score"), int | float))
        ]
        if values:
            return min(max(sum(values) / len(values), 0.0), 1.0)
    return 0.0
