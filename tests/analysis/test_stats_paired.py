"""Paired difference of two runs: a known shift is recovered and covered; unpaired cells are reported."""

import numpy as np
import pandas as pd
import pytest

from forge_eval._errors import UsageError
from forge_eval.analysis import hierarchical_bootstrap, paired_difference, trial_cells


def two_runs(rng: np.random.Generator, shift: float, n_tasks: int = 40, n_seeds: int = 3):
    """Runs sharing a strong task effect (difficulty), b = a's task effect + shift, independent noise."""
    task_effect = rng.normal(0.5, 0.2, size=(n_tasks, 1))
    a = task_effect + rng.normal(0, 0.08, size=(n_tasks, n_seeds))
    b = task_effect + shift + rng.normal(0, 0.08, size=(n_tasks, n_seeds))
    return frame(a), frame(b)


def frame(matrix: np.ndarray) -> pd.DataFrame:
    tasks, seeds = np.indices(matrix.shape)
    return pd.DataFrame(
        {"task_id": [f"t{t:02d}" for t in tasks.ravel()], "seed": seeds.ravel(), "value": matrix.ravel()}
    )


def test_known_shift_is_recovered_and_covered_and_pairing_beats_separate_intervals():
    run_a, run_b = two_runs(np.random.default_rng(0), shift=0.05)
    paired = paired_difference(run_a, run_b, random_state=1)
    result = paired.difference
    assert result.estimate == pytest.approx(run_b["value"].mean() - run_a["value"].mean())
    assert result.estimate == pytest.approx(0.05, abs=3 * result.standard_error)
    assert result.ci_low <= 0.05 <= result.ci_high
    assert result.ci_low > 0  # the shift is detected ...
    a_alone, b_alone = hierarchical_bootstrap(run_a), hierarchical_bootstrap(run_b)
    assert a_alone.ci_high > b_alone.ci_low  # ... although the runs' own intervals overlap
    assert result.ci_high - result.ci_low < 0.7 * (a_alone.ci_high - a_alone.ci_low)
    assert (paired.n_paired, paired.n_unpaired_a, paired.n_unpaired_b, paired.n_dropped) == (120, 0, 0, 0)
    assert result.estimator.startswith("paired difference b - a per task x seed; mean over tasks x seeds")


def test_difference_is_b_minus_a():
    run_a, run_b = two_runs(np.random.default_rng(1), shift=0.2)
    assert paired_difference(run_a, run_b, n_resamples=500).difference.estimate > 0.15
    assert paired_difference(run_b, run_a, n_resamples=500).difference.estimate < -0.15


def test_unpaired_cells_are_dropped_and_counted():
    run_a, run_b = two_runs(np.random.default_rng(2), shift=0.0, n_tasks=10)
    extra_task = pd.DataFrame({"task_id": ["only-in-a"] * 3, "seed": [0, 1, 2], "value": [1.0, 0.0, 1.0]})
    run_a = pd.concat([run_a, extra_task], ignore_index=True)
    run_b = run_b.drop(index=[0, 4]).reset_index(drop=True)  # two cells of b missing
    run_b.loc[len(run_b)] = ["t00", 7, 0.5]  # a seed a never ran
    paired = paired_difference(run_a, run_b, n_resamples=500)
    assert (paired.n_paired, paired.n_unpaired_a, paired.n_unpaired_b) == (28, 5, 1)
    assert paired.n_dropped == 6
    assert paired.difference.n_obs == 28 and paired.difference.n_tasks == 10


def test_runs_with_nothing_in_common_are_a_clear_error():
    run_a, run_b = two_runs(np.random.default_rng(3), shift=0.0, n_tasks=4)
    with pytest.raises(UsageError, match="share no tasks"):
        paired_difference(run_a, run_b.assign(task_id="other-" + run_b["task_id"]))
    with pytest.raises(UsageError, match="share 4 task\\(s\\) but no seeds"):
        paired_difference(run_a, run_b.assign(seed=run_b["seed"] + 100))
    with pytest.raises(UsageError, match="run b lacks column"):
        paired_difference(run_a, run_b.rename(columns={"value": "score"}))


def test_pairs_the_cells_of_two_trials_tables():
    """Typical use: compare the success rates of two runs (e.g. two credit variants)."""
    rng = np.random.default_rng(4)
    rows = []
    for run, rate in (("a", 0.3), ("b", 0.6)):
        for task in range(30):
            for seed in (0, 1):
                for epoch in (1, 2, 3):
                    passed = bool(rng.random() < rate)
                    rows.append((run, f"task{task}", seed, epoch, float(passed), passed))
    trials = pd.DataFrame(rows, columns=["run", "task_id", "seed", "epoch", "score", "passed"])
    cells = {run: trial_cells(group, epochs=3, graded=False) for run, group in trials.groupby("run")}
    paired = paired_difference(cells["a"], cells["b"], value="success_rate", random_state=0)
    observed = trials[trials.run == "b"]["passed"].mean() - trials[trials.run == "a"]["passed"].mean()
    assert paired.difference.estimate == pytest.approx(observed)
    assert paired.difference.ci_low <= 0.3 <= paired.difference.ci_high
    assert paired.n_paired == 60
