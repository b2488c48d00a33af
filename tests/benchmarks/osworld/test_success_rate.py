"""OSWorld's success rate is the mean of its task results, fractional ones included (upstream's
`sum(scores) / len(scores)`); the all-or-nothing rate is reported as `full_success_rate`."""

from __future__ import annotations

import statistics

import pandas as pd
import pytest

from forge_eval.analysis import summarize_trials
from forge_eval.benchmarks import BENCHMARKS

SCORES = {"a": 1.0, "b": 0.5, "c": 0.0, "d": 0.25}


def _trials() -> pd.DataFrame:
    official = BENCHMARKS.get("osworld").official
    return pd.DataFrame(
        {
            "task_id": list(SCORES),
            "seed": 0,
            "epoch": 1,
            "score": list(SCORES.values()),
            "passed": [s >= official.pass_threshold for s in SCORES.values()],
        }
    )


def test_osworld_success_rate_is_the_mean_task_result() -> None:
    official = BENCHMARKS.get("osworld").official
    assert official.fractional_success
    metrics = summarize_trials(
        _trials(), epochs=1, graded=official.graded, fractional=official.fractional_success, n_resamples=200
    )
    assert metrics["success_rate"].estimate == pytest.approx(statistics.mean(SCORES.values()))  # 0.4375
    assert metrics["full_success_rate"].estimate == pytest.approx(1 / 4)
    assert list(metrics)[:2] == ["success_rate", "full_success_rate"]


def test_other_benchmarks_keep_the_share_of_passes() -> None:
    metrics = summarize_trials(_trials(), epochs=1, graded=True, n_resamples=200)
    assert metrics["success_rate"].estimate == pytest.approx(1 / 4)
    assert "full_success_rate" not in metrics
