"""MCP-Atlas claim scoring (v1 `mcp_evals_scores.py`): one judge verdict per claim, coverage, pass.

fulfilled = 1, partially_fulfilled = 0.5, not_fulfilled = 0 (and so is a failed or unreadable judge
call); coverage = mean over claims, rounded to 3 places; a task passes at coverage >= 0.75.
"""

from __future__ import annotations

from collections.abc import Sequence

PASS_THRESHOLD = 0.75
OUTCOME_SCORES = {"fulfilled": 1.0, "partially_fulfilled": 0.5, "not_fulfilled": 0.0}


def outcome_score(outcome: object) -> float:
    return OUTCOME_SCORES.get(str(outcome).strip().lower(), 0.0)


def coverage(outcomes: Sequence[object]) -> float:
    if not outcomes:
        return 0.0
    return round(sum(outcome_score(o) for o in outcomes) / len(outcomes), 3)


def passed(score: float, threshold: float = PASS_THRESHOLD) -> bool:
    return score >= threshold
