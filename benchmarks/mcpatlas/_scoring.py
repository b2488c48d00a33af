"""MCP-Atlas's pass line: a task passes at claim coverage >= 0.75 (upstream's `--pass-threshold`
default in `mcp_evals_scores.py`; the coverage itself is upstream's, see `_judge.py`)."""

from __future__ import annotations

PASS_THRESHOLD = 0.75


def passed(score: float, threshold: float = PASS_THRESHOLD) -> bool:
    return score >= threshold
