"""Judging a final answer against a task's claims: one judge call per claim, then coverage."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Protocol

from inspect_ai.model import ChatMessageUser, GenerateConfig, Model

from forge_eval.benchmarks.mcpatlas._judge import claim_prompt
from forge_eval.benchmarks.mcpatlas._scoring import coverage, outcome_score


class ClaimJudge(Protocol):
    async def verdict(self, prompt: str) -> dict[str, Any]: ...


@dataclass
class ModelClaimJudge:
    """An Inspect model (the "judge" role) at temperature 0."""

    model: Model

    async def verdict(self, prompt: str) -> dict[str, Any]:
        output = await self.model.generate(
            [ChatMessageUser(content=prompt)], config=GenerateConfig(temperature=0.0)
        )
        match = re.search(r"\{.*\}", output.completion or "", re.DOTALL)
        try:
            data = json.loads(match.group(0)) if match else {}
        except json.JSONDecodeError:
            data = {}
        return data if isinstance(data, dict) else {}


@dataclass(frozen=True)
class ClaimResult:
    claim: str
    outcome: str
    score: float
    justification: str


async def judge_claims(
    judge: ClaimJudge, claims: tuple[str, ...], response: str
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
