"""Judging a final answer against a task's claims: one judge call per claim, then coverage."""

from __future__ import annotations

from dataclasses import dataclass

from forge_eval.benchmarks._judge import Judge
from forge_eval.benchmarks.mcpatlas._judge import claim_prompt
from forge_eval.benchmarks.mcpatlas._scoring import coverage, outcome_score


@dataclass(frozen=True)
class ClaimResult:
    claim: str
    outcome: str
    score: float
    justification: str


async def judge_claims(
    judge: Judge, claims: tuple[str, ...], response: str
) -> tuple[float, list[ClaimResult]]:
    """Coverage of `response` over `claims`; a failed or unreadable verdict is not_fulfilled."""
    results = []
    for claim in claims:
        try:
            verdict = await judge.verdict(claim_prompt(claim, response))
        except Exception as e:  # upstream scores a failed judge call as not fulfilled
            verdict = {"coverage_outcome": "not_fulfilled", "justification": f"judge call failed: {e}"}
        outcome = str(verdict.get("coverage_outcome", "not_fulfilled"))
        results.append(
            ClaimResult(claim, outcome, outcome_score(outcome), str(verdict.get("justification", "")))
        )
    return coverage([r.outcome for r in results]), results
