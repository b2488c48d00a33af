"""QwenClawBench scoring, as in its `scripts/lib_grading.py`.

- automated score = mean of the numeric values `grade()` returns (booleans count as 1/0, as in
  Python; a task without code, or a `grade()` that returns no dict, scores 0);
- hybrid (default, "penalized") = (w_a s_auto + w_l s_llm 1[s_auto >= 0.75]) / (w_a + w_l);
  `simple=True` drops the gate (upstream `--simple-scoring`);
- weights: missing `grading_weights` -> 0.5 / 0.5; a missing or misspelled key (task_00059's
  `llmjudge`, task_00035's `llm`) -> that weight is 0.5; weights summing to <= 0 -> 0.5 / 0.5;
- task score = mean over runs; benchmark score = mean over tasks (x100 on the leaderboard).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

AUTO_GATE = 0.75
DEFAULT_WEIGHT = 0.5
RUNS = 3


def automated_score(scores: Any) -> float:
    if not isinstance(scores, Mapping):
        return 0.0
    values = [float(v) for v in scores.values() if isinstance(v, int | float)]
    return sum(values) / len(values) if values else 0.0


def weights(grading_weights: Mapping[str, Any] | None) -> tuple[float, float]:
    """(w_automated, w_llm_judge) with the upstream fallbacks."""
    given = grading_weights or {"automated": DEFAULT_WEIGHT, "llm_judge": DEFAULT_WEIGHT}
    auto = float(given.get("automated", DEFAULT_WEIGHT))
    llm = float(given.get("llm_judge", DEFAULT_WEIGHT))
    if auto + llm <= 0:
        return DEFAULT_WEIGHT, DEFAULT_WEIGHT
    return auto, llm


def hybrid_score(
    auto: float, llm: float, grading_weights: Mapping[str, Any] | None, simple: bool = False
) -> float:
    w_auto, w_llm = weights(grading_weights)
    gated = llm if simple or auto >= AUTO_GATE else 0.0
    return (w_auto * auto + w_llm * gated) / (w_auto + w_llm)


def task_score(
    grading_type: str,
    auto: float,
    llm: float,
    grading_weights: Mapping[str, Any] | None,
    simple: bool = False,
) -> float:
    """One run's score for a task of `grading_type` (automated / llm_judge / hybrid)."""
    if grading_type == "automated":
        return auto
    if grading_type == "llm_judge":
        return llm
    return hybrid_score(auto, llm, grading_weights, simple)


def benchmark_score(runs_by_task: Mapping[str, Sequence[float]]) -> float:
    """Mean over tasks of each task's mean over its runs, in [0, 1] (the leaderboard shows x100)."""
    means = [sum(r) / len(r) for r in runs_by_task.values() if r]
    if not means:
        raise ValueError("no scored runs")
    return sum(means) / len(means)
