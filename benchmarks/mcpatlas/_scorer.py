"""The MCP-Atlas scorer: claim coverage of the final answer, one judge call per claim."""

from __future__ import annotations

from inspect_ai.model import ChatMessageAssistant
from inspect_ai.scorer import Score, Scorer, Target, mean, scorer, stderr
from inspect_ai.solver import TaskState

from forge_eval.benchmarks._judge import Judge, ModelJudge
from forge_eval.benchmarks.mcpatlas._claims import judge_claims
from forge_eval.benchmarks.mcpatlas._judge import JUDGE, OFFICIAL_JUDGE
from forge_eval.benchmarks.mcpatlas._scoring import PASS_THRESHOLD, passed


def final_answer(state: TaskState) -> str:
    """The last assistant text (the answer upstream scores)."""
    for message in reversed(state.messages):
        if isinstance(message, ChatMessageAssistant) and message.text.strip():
            return message.text
    return ""


@scorer(metrics=[mean(), stderr()])
def atlas_scorer(judge: Judge | None = None) -> Scorer:
    """Claim coverage of the final answer (one judge call per claim); passes at >= 0.75.

    Args:
        judge: A judge to use instead of the "judge" model role (tests pass a scripted one).
    """

    async def score(state: TaskState, target: Target) -> Score:
        chosen = judge or ModelJudge.from_role(JUDGE, official=OFFICIAL_JUDGE)
        answer = final_answer(state)
        value, results = await judge_claims(chosen, tuple(state.metadata["claims"]), answer)
        model = str(getattr(chosen, "name", type(chosen).__name__))
        return Score(
            value=value,
            answer=answer,
            explanation="; ".join(f"{r.outcome}: {r.claim}" for r in results),
            metadata={
                "passed": passed(value),
                "claims": [vars(r) for r in results],
                "left_out_tools": state.metadata.get("left_out_tools", []),
                "judge": {
                    "model": model,
                    "prompt_sha256": JUDGE.prompt_sha256,
                    "comparable": bool(getattr(chosen, "comparable", False)),
                    "threshold": PASS_THRESHOLD,
                },
            },
        )

    return score
