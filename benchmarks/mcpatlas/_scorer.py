"""The MCP-Atlas scorer: upstream's claim coverage of the final answer (see `_judge.py`)."""

from __future__ import annotations

from pathlib import Path

from inspect_ai.model import ChatMessageAssistant, Model
from inspect_ai.scorer import Score, Scorer, Target, mean, scorer, stderr
from inspect_ai.solver import TaskState

from forge_eval.benchmarks.mcpatlas._judge import JUDGE, OFFICIAL_JUDGE, extract_claims, judge_claims
from forge_eval.benchmarks.mcpatlas._scoring import PASS_THRESHOLD, passed


def final_answer(state: TaskState) -> str:
    """The answer upstream scores: the harness's final output when it gives one (atlas-loop: upstream's
    own extraction, `script_model_response`), else the last assistant text."""
    if state.output is not None and state.output.completion.strip():
        return state.output.completion
    for message in reversed(state.messages):
        if isinstance(message, ChatMessageAssistant) and message.text.strip():
            return message.text
    return ""


@scorer(metrics=[mean(), stderr()])
def atlas_scorer(judge: Model | None = None) -> Scorer:
    """Claim coverage of the final answer by upstream's `CoverageEvaluator`; passes at >= 0.75.

    Args:
        judge: A model to use instead of the one bound to the role "judge" (tests pass a scripted one).
    """

    async def score(state: TaskState, target: Target) -> Score:
        tree = Path(state.metadata["upstream_tree"])
        claims = extract_claims(tree, state.metadata["gtfa_claims"])
        answer = final_answer(state)
        verdicts = await judge_claims(tree, claims, answer, judge)
        return Score(
            value=verdicts.coverage,
            answer=answer,
            explanation="; ".join(f"{c.get('score')}: {c.get('claim')}" for c in verdicts.per_claim),
            metadata={
                "passed": passed(verdicts.coverage),
                "claims": claims,
                "per_claim": verdicts.per_claim,
                "fully_covered_claims": verdicts.details.get("fully_covered_claims"),
                "partially_covered_claims": verdicts.details.get("partially_covered_claims"),
                "left_out_tools": state.metadata.get("left_out_tools", []),
                "judge": {
                    "official": OFFICIAL_JUDGE,
                    "prompts": JUDGE.origin,
                    "threshold": PASS_THRESHOLD,
                },
            },
        )

    return score
