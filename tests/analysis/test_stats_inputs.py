"""Inputs the statistics must not take silently: unbalanced cells, infinite values, logs without a seed."""

import math

import numpy as np
import pandas as pd
import pytest
from _behavior_logs import Call, eval_log, sample, turn

from forge_eval import UsageError
from forge_eval.analysis import hierarchical_bootstrap, read_transcripts, summarize_trials, trials_table


def _trials(rows: list[tuple[str, int, float]]) -> pd.DataFrame:
    return pd.DataFrame(
        [{"task_id": t, "seed": s, "epoch": 1, "score": v, "passed": v >= 1.0} for t, s, v in rows]
    )


def test_headline_is_the_mean_over_tasks_with_unbalanced_seeds():
    # a: 3 seeds, all pass; b: 1 seed, fails; c: 2 seeds, one passes. Over tasks 0.5; over cells 4/6.
    rows = [("a", 0, 1.0), ("a", 1, 1.0), ("a", 2, 1.0), ("b", 0, 0.0), ("c", 0, 1.0), ("c", 1, 0.0)]
    trials = _trials(rows)
    summary = summarize_trials(trials, epochs=1, graded=True, n_resamples=500)
    per_task = trials.groupby("task_id")["score"].mean()
    assert summary["success_rate"].estimate == pytest.approx(per_task.mean())  # (1 + 0 + 0.5) / 3
    assert summary["success_rate"].estimate != pytest.approx(trials["score"].mean())
    assert summary["mean_score"].estimate == pytest.approx(0.5)
    assert "mean over tasks" in summary["success_rate"].estimator


def test_single_task_point_estimate_is_also_the_task_mean():
    summary = summarize_trials(_trials([("a", 0, 1.0), ("a", 1, 0.0)]), epochs=1, graded=False)
    assert summary["success_rate"].estimate == 0.5 and math.isnan(summary["success_rate"].ci_low)


@pytest.mark.parametrize("bad", [math.inf, -math.inf])
def test_an_infinite_score_is_refused_naming_the_trial(bad):
    with pytest.raises(UsageError, match=r"trial \(b, seed 0, epoch 1\) has score -?inf"):
        summarize_trials(_trials([("a", 0, 1.0), ("b", 0, bad)]), epochs=1, graded=True)


def test_infinite_cells_are_refused_by_the_bootstrap():
    with pytest.raises(UsageError, match="infinite"):
        hierarchical_bootstrap(np.array([[0.1, 0.2], [np.inf, 0.3], [0.5, 0.4]]))
    frame = pd.DataFrame({"task_id": ["a", "b", "c"], "seed": [0, 0, 0], "value": [0.1, -np.inf, 0.2]})
    with pytest.raises(UsageError, match="infinite"):
        hierarchical_bootstrap(frame)
    # NaN still marks a missing cell
    cells = np.array([[0.1, np.nan], [0.2, 0.3], [0.5, 0.4]])
    assert hierarchical_bootstrap(cells, n_resamples=200).n_obs == 5


def test_a_log_without_a_seed_is_refused_not_counted_as_seed_0():
    log = eval_log([sample("t1", [turn(Call("bash", {"command": "ls"}, "x")), turn(text="ok")])])
    log.eval.task_args = {}
    log.location = "/runs/x/logs/no-seed.eval"
    with pytest.raises(UsageError, match="no-seed.eval has no seed"):
        trials_table([log], threshold=1.0)
    with pytest.raises(UsageError, match="has no seed"):
        read_transcripts([log])
    log.plan.config.seed = 7  # a plain Inspect run with --seed 7
    assert trials_table([log], threshold=1.0)["seed"].tolist() == [7]
    log.plan.config.seed = None
    log.eval.model_generate_config.seed = 8  # a model created with GenerateConfig(seed=8)
    assert trials_table([log], threshold=1.0)["seed"].tolist() == [8]
