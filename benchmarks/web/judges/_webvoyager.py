"""WebVoyager's LLM judge (Fara-595 variant): task + final response + the last screenshots -> verdict.

The prompt is written for forge-eval to the published judge's specification (evaluator role; inputs
task, response and screenshots; screenshots outrank the response; every part of the task must hold;
"NOT SUCCESS" otherwise); it is not the upstream text.
"""

from __future__ import annotations

import re

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

#: Fara's variant shows the judge the last 30 screenshots.
LAST_SCREENSHOTS = 30
#: The text variant's renderings are long (ARIA + OCR, ~1k tokens each): it shows only the last 3.
TEXT_LAST_SCREENSHOTS = 3

SYSTEM = """\
You are an evaluator of web browsing agents. You receive a task given to an agent, the agent's final \
response, and screenshots of the browser during its work (in order; the last one shows the final state).
Decide whether the agent completed the task. Rules:
- The screenshots are the evidence: a claim in the response they do not support does not count.
- Every part of the task must be satisfied (all constraints, quantities, filters, and the requested action).
- If the task asks for information, the response must state it and it must match the screenshots.
- If the task asks for an action (add, book, save, subscribe), the screenshots must show it done.
- Do not assume anything you cannot see.
Explain briefly, then end with exactly one line: "Verdict: SUCCESS" or "Verdict: NOT SUCCESS"."""

USER = "Task: {task}\nFinal response: {response}\nThe last {n} screenshots of the trajectory follow."

PROMPT_SHA256 = prompt_sha256(SYSTEM, USER)


def parse_verdict(text: str) -> bool | None:
    """True for SUCCESS, False for NOT SUCCESS / FAILURE, None when the reply has no verdict."""
    found = re.findall(r"verdict\s*[:=]?\s*\**\s*(not\s+success|success|failure|fail)", text, re.IGNORECASE)
    if not found:
        return None
    return found[-1].lower() == "success"


@scorer(metrics=[accuracy(), stderr()])
def webvoyager_judge(text: bool = False, ocr: bool = True, last: int = LAST_SCREENSHOTS) -> Scorer:
    """WebVoyager's judge as a scorer; the judge model is the Inspect role "judge".

    Args:
        text: Use the text-only variant (ARIA + OCR instead of images; "not comparable").
        ocr: In the text variant, add tesseract's reading of each screenshot.
        last: How many of the last screenshots the judge sees (the text variant: at most 3).
    """

    async def score(state: TaskState, target: Target) -> Score:
        trajectory = current_env().trajectory
        model = judge_model()
        view = resolve_view(text, model, ocr)
        steps = all_steps(trajectory)[-(min(last, TEXT_LAST_SCREENSHOTS) if view.text else last) :]
        content: list = [
            ContentText(
                text=USER.format(task=trajectory.task, response=trajectory.final_response, n=len(steps))
            )
        ]
        for i, step in enumerate(steps, start=1):
            content += view.screenshot(step, f"Screenshot {i} of {len(steps)}:")
        output = await model.generate([ChatMessageSystem(content=SYSTEM), ChatMessageUser(content=content)])
        verdict = parse_verdict(output.completion)
        return Score(
            value=1.0 if verdict else 0.0,
            answer=trajectory.final_response,
            explanation=output.completion,
            metadata=judge_metadata(
                "webvoyager", model, view, len(steps), parsed=verdict is not None, prompt_sha256=PROMPT_SHA256
            ),
        )

    return score
