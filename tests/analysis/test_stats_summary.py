"""summarize_trials: per-cell metrics against hand computation, errored trials, results.json shape."""

import json
import math
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from forge_eval._errors import UsageError
from forge_eval.analysis import MetricSummary, hierarchical_bootstrap, summarize_trials, trial_cells

# (task, seed) -> scores of epochs 1..3; NaN = errored trial
CELLS = {
    ("alpha", 0): [1.0, 0.0, 1.0],
    ("alpha", 1): [1.0, 1.0, 1.0],
    ("beta", 0): [0.0, 0.0, 0.0],
    ("beta", 1): [0.0, math.nan, 1.0],
    ("gamma", 0): [0.5, 1.0, math.nan],
    ("gamma", 1): [1.0, 0.25, 0.0],
}


def table(cells: dict = CELLS, threshold: float = 1.0) -> pd.DataFrame:
    rows = [
        {"task_id": task, "seed": seed, "epoch": epoch, "score": score, "passed": score >= threshold}
        for (task, seed), scores in cells.items()
        for epoch, score in enumerate(scores, start=1)
    ]
    return pd.DataFrame(rows)


def exact_mean(values) -> float:
    return float(sum(values, Fraction(0)) / len(values))


def passes(scores) -> int:
    return sum(1 for s in scores if not math.isnan(s) and s >= 1.0)


def test_metrics_match_hand_computation_from_the_definitions():
    extra_columns = {"error": "", "log_file": "seed-0.eval", "difficulty": "easy"}  # as trials_table has
    summary = summarize_trials(table().assign(**extra_columns), epochs=3, graded=True, n_resamples=2000)
    assert list(summary) == ["success_rate", "pass@2", "pass^2", "pass@3", "pass^3", "mean_score"]
    counts = [(len(s), passes(s)) for s in CELLS.values()]
    expected = {
        "success_rate": exact_mean([Fraction(c, n) for n, c in counts]),
        "pass@2": exact_mean([1 - Fraction(math.comb(n - c, 2), math.comb(n, 2)) for n, c in counts]),
        "pass^2": exact_mean([Fraction(math.comb(c, 2), math.comb(n, 2)) for n, c in counts]),
        "pass@3": exact_mean([Fraction(int(c > 0)) for n, c in counts]),
        "pass^3": exact_mean([Fraction(int(c == n)) for n, c in counts]),
        "mean_score": float(np.mean([np.mean(np.nan_to_num(s, nan=0.0)) for s in CELLS.values()])),
    }
    for name, value in expected.items():
        metric = summary[name]
        assert metric.estimate == pytest.approx(value, abs=1e-12), name
        assert metric.ci_low <= metric.estimate <= metric.ci_high, name
        assert (metric.n_tasks, metric.n_seeds, metric.n_trials) == (3, 2, 18)
        assert metric.confidence_level == 0.95


def test_errored_trials_count_as_failures_even_if_marked_passed():
    trials = table()
    errored = trials["score"].isna()
    trials.loc[errored, "passed"] = True  # inconsistent input: NaN score must still fail
    summary = summarize_trials(trials, epochs=3, graded=True, n_resamples=500)
    reference = summarize_trials(table(), epochs=3, graded=True, n_resamples=500)
    assert summary["success_rate"].estimate == reference["success_rate"].estimate
    assert "errored trials fail" in summary["success_rate"].estimator
    cells = trial_cells(trials, epochs=3, graded=True).set_index(["task_id", "seed"])
    assert cells.loc[("beta", 1), "n"] == 3 and cells.loc[("beta", 1), "c"] == 1
    assert cells.loc[("gamma", 0), "mean_score"] == pytest.approx(1.5 / 3)


def test_per_seed_estimates_are_the_metric_over_tasks_within_each_seed():
    summary = summarize_trials(table(), epochs=3, graded=False, n_resamples=500)
    per_seed = {entry["seed"]: entry["estimate"] for entry in summary["success_rate"].per_seed}
    seed0 = np.mean([passes(CELLS[(t, 0)]) / 3 for t in ("alpha", "beta", "gamma")])
    seed1 = np.mean([passes(CELLS[(t, 1)]) / 3 for t in ("alpha", "beta", "gamma")])
    assert per_seed == pytest.approx({0: seed0, 1: seed1})
    assert "mean_score" not in summary


def test_success_rate_interval_is_the_hierarchical_bootstrap_of_the_cells():
    trials = table()
    summary = summarize_trials(trials, epochs=3, graded=False, n_resamples=3000, random_state=9)
    cells = trial_cells(trials, epochs=3, graded=False)
    direct = hierarchical_bootstrap(
        cells, value="success_rate", statistic="task_mean", n_resamples=3000, random_state=9
    )
    metric = summary["success_rate"]
    assert (metric.estimate, metric.ci_low, metric.ci_high) == (
        direct.estimate,
        direct.ci_low,
        direct.ci_high,
    )
    assert metric.estimator.endswith(direct.estimator)


def test_shared_resamples_keep_pass_at_k_intervals_monotone_in_k():
    rng = np.random.default_rng(0)
    cells = {
        (f"t{t}", s): list((rng.random(5) < rng.random()).astype(float)) for t in range(25) for s in range(3)
    }
    summary = summarize_trials(table(cells), epochs=5, graded=False, method="percentile", n_resamples=2000)
    for k in range(2, 5):
        lower, upper = summary[f"pass@{k}"], summary[f"pass@{k + 1}"]
        assert lower.ci_low <= upper.ci_low and lower.ci_high <= upper.ci_high
        lower, upper = summary[f"pass^{k + 1}"], summary[f"pass^{k}"]
        assert lower.ci_low <= upper.ci_low and lower.ci_high <= upper.ci_high


def test_reproducible_for_a_seed_and_json_ready():
    first = summarize_trials(table(), epochs=3, graded=True, n_resamples=1000, random_state=5)
    again = summarize_trials(table(), epochs=3, graded=True, n_resamples=1000, random_state=5)
    other = summarize_trials(table(), epochs=3, graded=True, n_resamples=1000, random_state=6)
    assert first == again
    assert any((first[n].ci_low, first[n].ci_high) != (other[n].ci_low, other[n].ci_high) for n in first)
    document = json.loads(json.dumps({n: m.to_dict() for n, m in first.items()}, allow_nan=False))
    assert set(document["pass@2"]) == {
        "estimate", "ci_low", "ci_high", "standard_error", "confidence_level", "per_seed",
        "n_tasks", "n_seeds", "n_trials", "estimator",
    }  # fmt: skip
    assert document["pass@2"]["per_seed"][0] == {
        "seed": 0,
        "estimate": first["pass@2"].per_seed[0]["estimate"],
    }


def test_a_single_task_gets_point_estimates_without_interval():
    one_task = {key: scores for key, scores in CELLS.items() if key[0] == "alpha"}
    summary = summarize_trials(table(one_task), epochs=3, graded=False)
    metric = summary["success_rate"]
    assert metric.estimate == pytest.approx(5 / 6)
    assert math.isnan(metric.ci_low) and math.isnan(metric.ci_high)
    assert metric.to_dict()["ci_low"] is None and "at least 2 tasks" in metric.estimator
    json.dumps(metric.to_dict(), allow_nan=False)


def test_cells_missing_trials_are_left_out_of_pass_at_k_only():
    """An interrupted run: one cell has 2 of 3 epochs. Its n is 2 for success_rate; no pass@3."""
    cells = dict(CELLS)
    cells[("alpha", 0)] = [1.0, 0.0]
    summary = summarize_trials(table(cells), epochs=3, graded=False, n_resamples=500)
    assert summary["success_rate"].n_trials == 17 and summary["pass@2"].n_trials == 17
    assert summary["pass@3"].n_trials == 15 and summary["pass^3"].n_trials == 15
    assert summary["success_rate"].estimate == pytest.approx(
        np.mean([0.5] + [passes(s) / 3 for k, s in CELLS.items() if k != ("alpha", 0)])
    )
    # pass@3 lacks the cell (alpha, 0): the estimate is still the mean over tasks, each task weighing the same
    pass3 = {k: float(passes(s) > 0) for k, s in CELLS.items() if k != ("alpha", 0)}
    tasks = ("alpha", "beta", "gamma")
    per_task = [np.mean([v for (t, _), v in pass3.items() if t == task]) for task in tasks]
    assert summary["pass@3"].estimate == pytest.approx(np.mean(per_task))
    assert summary["pass@3"].estimate != pytest.approx(np.mean(list(pass3.values())))


def test_summary_type_and_bad_tables_are_clear_errors():
    assert isinstance(
        summarize_trials(table(), epochs=3, graded=False, n_resamples=100)["pass@2"], MetricSummary
    )
    with pytest.raises(UsageError, match="epoch 3, outside 1..2"):
        summarize_trials(table(), epochs=2, graded=False)
    with pytest.raises(UsageError, match="more than one row for task alpha, seed 0, epoch 1"):
        summarize_trials(pd.concat([table(), table().head(1)]), epochs=3, graded=False)
    with pytest.raises(UsageError, match=r"lacks column\(s\) \['passed'\]"):
        summarize_trials(table().drop(columns="passed"), epochs=3, graded=False)
    with pytest.raises(UsageError, match="empty"):
        summarize_trials(table().head(0), epochs=3, graded=False)
    with pytest.raises(UsageError, match="epochs must be an integer >= 1"):
        summarize_trials(table(), epochs=0, graded=False)
