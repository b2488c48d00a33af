"""WebJudge (Online-Mind2Web): key points -> per-screenshot relevance 1-5 -> outcome.

Three stages with the judge model: (1) the key points a correct solution must meet, from the task
alone; (2) each screenshot scored 1-5 for how much evidence it holds about them, keeping those scoring
>= 3 (at most 50, the highest); (3) the outcome from the task, key points, action history, final response
and the kept screenshots. Prompts are written for forge-eval to that published method, not copied.
"""

from __future__ import annotations

import re
from typing import Any

from inspect_ai.model import ChatMessageSystem, ChatMessageUser, ContentText
from inspect_ai.scorer import Score, Scorer, Target, accuracy, scorer, stderr
from inspect_ai.solver import TaskState

from forge_eval.benchmarks.web._binding import current_env
from forge_eval.benchmarks.web.judges._common import (
    all_steps,
    judge_metadata,
    judge_model,
    prompt_sha256,
    resolve_view,
)

KEEP_MIN_SCORE = 3
MAX_IMAGES = 50

KEY_POINTS = """\
You prepare the evaluation of a web task. List the key points a correct solution must satisfy: every \
explicit requirement (the item or page to find, filters, values, quantities, dates, the action to perform). \
Do not add requirements the task does not state.
Task: {task}
Answer with "Key points:" followed by a numbered list."""

RELEVANCE = """\
Task: {task}
{key_points}
Look at the screenshot from the agent's trajectory. Describe briefly what it shows that matters for the key \
points (values, filters, confirmations, errors). Then rate how useful it is as evidence for judging the \
task, from 1 (irrelevant) to 5 (shows decisive evidence). End with "Score: <1-5>"."""

OUTCOME_SYSTEM = """\
You judge whether a web agent completed a task. You get the task, its key points, the agent's action \
history, its final response, and the screenshots that hold evidence (with notes). The task is completed \
only if every key point is met according to the evidence; claims without evidence do not count. \
Explain briefly, then end with exactly one line: "Status: success" or "Status: failure"."""

OUTCOME = """\
Task: {task}
{key_points}
Action history:
{history}
Final response: {response}
{n} screenshots with evidence follow."""

PROMPT_SHA256 = prompt_sha256(KEY_POINTS, RELEVANCE, OUTCOME_SYSTEM, OUTCOME)


def parse_relevance(text: str) -> int:
    """The 1-5 score of a relevance reply (1 when there is none)."""
    found = re.findall(r"score\s*[:=]?\s*\**\s*([1-5])", text, re.IGNORECASE)
    return int(found[-1]) if found else 1


def parse_status(text: str) -> bool | None:
    found = re.findall(r"status\s*[:=]?\s*\**\s*\"?(success|failure|fail)", text, re.IGNORECASE)
    return found[-1].lower() == "success" if found else None


def keep_screenshots(scores: list[int]) -> list[int]:
    """Indices of the screenshots kept for the outcome: score >= 3, at most 50 (best first), in order."""
    eligible = [i for i, s in enumerate(scores) if s >= KEEP_MIN_SCORE]
    best = sorted(eligible, key=lambda i: (-scores[i], i))[:MAX_IMAGES]
    return sorted(best)


@scorer(metrics=[accuracy(), stderr()])
def webjudge(text: bool = False, ocr: bool = True) -> Scorer:
    """WebJudge as a scorer; the judge model is the Inspect role "judge".

    Args:
        text: Use the text-only variant (ARIA + OCR instead of images; "not comparable").
        ocr: In the text variant, add tesseract's reading of each screenshot.
    """

    async def score(state: TaskState, target: Target) -> Score:
        trajectory = current_env().trajectory
        model = judge_model()
        view = resolve_view(text, model, ocr)
        task = trajectory.task
        key_points = (await model.generate(KEY_POINTS.format(task=task))).completion.strip()
        steps = all_steps(trajectory)
        relevance: list[int] = []
        notes: list[str] = []
        for i, step in enumerate(steps, start=1):
            content: list[Any] = [ContentText(text=RELEVANCE.format(task=task, key_points=key_points))]
            content += view.screenshot(step, f"Screenshot {i}:")
            reply = (await model.generate([ChatMessageUser(content=content)])).completion
            relevance.append(parse_relevance(reply))
            notes.append(reply.strip())
        kept = keep_screenshots(relevance)
        history = (
            "\n".join(f"{n}. {line}" for n, line in enumerate(trajectory.action_history(), start=1))
            or "(none)"
        )
        content = [
            ContentText(
                text=OUTCOME.format(
                    task=task,
                    key_points=key_points,
                    history=history,
                    response=trajectory.final_response,
                    n=len(kept),
                )
            )
        ]
        for i in kept:
            content += view.screenshot(steps[i], f"Screenshot {i + 1} (note: {notes[i][:300]})")
        output = await model.generate(
            [ChatMessageSystem(content=OUTCOME_SYSTEM), ChatMessageUser(content=content)]
        )
        status = parse_status(output.completion)
        return Score(
            value=1.0 if status else 0.0,
            answer=trajectory.final_response,
            explanation=output.completion,
            metadata=judge_metadata(
                "webjudge",
                model,
                view,
                len(kept),
                key_points=key_points,
                relevance=relevance,
                parsed=status is not None,
                prompt_sha256=PROMPT_SHA256,
            ),
        )

    return score
