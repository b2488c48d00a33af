"""The two-level bootstrap against independent references.

- one seed per task: the two-level bootstrap reduces to the ordinary one, so percentile and BCa
  intervals must agree with `scipy.stats.bootstrap` within Monte-Carlo error;
- the bootstrap variance of a two-level resample has a closed form (law of total variance),
  which the reported standard error must match;
- a plain Python-loop implementation of the two-level scheme must give the same distribution.
"""

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from forge_eval._errors import UnknownNameError, UsageError
from forge_eval.analysis import CI_METHODS, STATISTICS, WITHIN_TASK, hierarchical_bootstrap
from forge_eval.analysis import _bootstrap as bootstrap_module


def long_table(matrix: np.ndarray) -> pd.DataFrame:
    """(tasks, seeds) matrix -> one row per present cell; NaN cells are left out."""
    tasks, seeds = np.nonzero(~np.isnan(matrix))
    return pd.DataFrame(
        {"task_id": [f"task-{t:03d}" for t in tasks], "seed": seeds, "value": matrix[tasks, seeds]}
    )


def unbalanced_matrix(rng: np.random.Generator, n_tasks: int, n_seeds: int) -> np.ndarray:
    difficulty = rng.beta(0.7, 0.9, size=(n_tasks, 1))
    matrix = rng.binomial(5, difficulty, size=(n_tasks, n_seeds)) / 5
    missing = rng.random((n_tasks, n_seeds)) < 0.25
    missing[:, 0] = False  # every task keeps at least one seed
    matrix[missing] = np.nan
    return matrix


@pytest.mark.parametrize(("ours", "scipy_method"), [("percentile", "percentile"), ("bca", "BCa")])
@pytest.mark.parametrize("kind", ["skewed", "binary"])
def test_one_seed_per_task_agrees_with_scipy_bootstrap(ours, scipy_method, kind):
    rng = np.random.default_rng(11)
    values = rng.beta(0.5, 2.0, size=40) if kind == "skewed" else (rng.random(60) < 0.3).astype(float)
    reference = stats.bootstrap(
        (values,), np.mean, method=scipy_method, n_resamples=10_000, confidence_level=0.95, rng=123
    )
    result = hierarchical_bootstrap(long_table(values[:, None]), method=ours, random_state=7)
    # means of 0/1 values lie on a lattice of step 1/n: a quantile may land one step over
    tolerance = 0.01 if kind == "skewed" else 1 / values.size + 1e-9
    assert result.estimate == pytest.approx(values.mean())
    assert abs(result.ci_low - reference.confidence_interval.low) <= tolerance
    assert abs(result.ci_high - reference.confidence_interval.high) <= tolerance
    assert result.standard_error == pytest.approx(reference.standard_error, rel=0.05)
    assert (result.n_tasks, result.n_seeds, result.n_obs) == (values.size, 1, values.size)


def test_two_level_standard_error_matches_the_law_of_total_variance_balanced():
    """Balanced cells: Var*(grand mean) = [var_t(task means) + mean_t(var_s within task) / S] / T,
    both variances with divisor T and S (the bootstrap draws from the empirical distributions)."""
    rng = np.random.default_rng(3)
    n_tasks, n_seeds = 25, 4
    matrix = rng.normal(rng.normal(0.5, 0.1, size=(n_tasks, 1)), 0.3, size=(n_tasks, n_seeds))
    between = matrix.mean(axis=1).var()
    within = matrix.var(axis=1).mean() / n_seeds
    expected_se = np.sqrt((between + within) / n_tasks)
    result = hierarchical_bootstrap(matrix, method="percentile", random_state=5)
    assert result.standard_error == pytest.approx(expected_se, rel=0.04)
    # a tasks-only bootstrap would miss the within term: make sure it is really there
    assert abs(result.standard_error - np.sqrt(between / n_tasks)) > 0.1 * expected_se


def test_keep_scheme_is_the_cluster_bootstrap_with_only_the_between_task_term():
    """within_task="keep": drawn tasks keep their seeds, Var* = var_t(task means) / T (balanced)."""
    rng = np.random.default_rng(3)
    matrix = rng.normal(rng.normal(0.5, 0.1, size=(25, 1)), 0.3, size=(25, 4))
    expected_se = np.sqrt(matrix.mean(axis=1).var() / 25)
    result = hierarchical_bootstrap(matrix, within_task="keep", random_state=5)
    assert result.standard_error == pytest.approx(expected_se, rel=0.04)
    assert "task-level bootstrap (drawn tasks keep their seeds)" in result.estimator
    two_level = hierarchical_bootstrap(matrix, random_state=5)
    assert two_level.standard_error > 1.1 * result.standard_error
    assert set(WITHIN_TASK.names()) == {"keep", "resample"}


def test_two_level_standard_error_matches_closed_form_unbalanced_task_mean():
    """Unbalanced cells, statistic = mean of task means: Var* = mean_t[(m_t-bar)^2 + var_t / n_t] / T."""
    rng = np.random.default_rng(4)
    matrix = unbalanced_matrix(rng, 30, 5)
    task_means = np.nanmean(matrix, axis=1)
    per_task = (task_means - task_means.mean()) ** 2 + np.nanvar(matrix, axis=1) / (~np.isnan(matrix)).sum(1)
    expected_se = np.sqrt(per_task.mean() / matrix.shape[0])
    result = hierarchical_bootstrap(matrix, statistic="task_mean", random_state=6)
    assert result.estimate == pytest.approx(task_means.mean())
    assert result.standard_error == pytest.approx(expected_se, rel=0.04)


def loop_reference(table: pd.DataFrame, n_resamples: int, rng: np.random.Generator) -> np.ndarray:
    """The two-level scheme written the obvious way: one Python iteration per resample."""
    groups = [g["value"].to_numpy() for _, g in table.groupby("task_id")]
    draws = np.empty(n_resamples)
    for b in range(n_resamples):
        cells = []
        for t in rng.integers(0, len(groups), size=len(groups)):
            cells.append(rng.choice(groups[t], size=len(groups[t]), replace=True))
        draws[b] = np.concatenate(cells).mean()
    return draws


def test_unbalanced_grand_mean_distribution_matches_a_python_loop_reference():
    rng = np.random.default_rng(8)
    table = long_table(unbalanced_matrix(rng, 15, 4))
    reference = loop_reference(table, 4000, np.random.default_rng(9))
    result = hierarchical_bootstrap(table, method="percentile", random_state=10)
    assert result.estimate == pytest.approx(table["value"].mean())
    assert result.standard_error == pytest.approx(reference.std(ddof=1), rel=0.05)
    scale = reference.std()
    assert abs(result.ci_low - np.quantile(reference, 0.025)) < 0.15 * scale
    assert abs(result.ci_high - np.quantile(reference, 0.975)) < 0.15 * scale
    assert (result.n_tasks, result.n_seeds, result.n_obs) == (15, 4, len(table))


def test_two_level_bca_matches_a_hand_written_bca_on_loop_draws():
    """BCa on skewed, unbalanced cells vs Efron's formulas applied to the loop reference's draws,
    with the acceleration from a jackknife that leaves out one whole task (all its seeds)."""
    rng = np.random.default_rng(12)
    matrix = rng.exponential(rng.exponential(1.0, size=(20, 1)), size=(20, 3))
    matrix[rng.random(matrix.shape) < 0.2] = np.nan
    matrix[:, 0] = np.nan_to_num(matrix[:, 0], nan=1.0)
    table = long_table(matrix)
    draws = loop_reference(table, 4000, np.random.default_rng(13))
    estimate = table["value"].mean()
    z0 = stats.norm.ppf(((draws < estimate).mean() + (draws <= estimate).mean()) / 2)
    left_out = np.array([table.loc[table["task_id"] != t, "value"].mean() for t in table["task_id"].unique()])
    d = left_out.mean() - left_out
    accel = (d**3).sum() / (6 * ((d**2).sum()) ** 1.5)
    z = stats.norm.ppf([0.025, 0.975])
    levels = stats.norm.cdf(z0 + (z0 + z) / (1 - accel * (z0 + z)))
    want_low, want_high = np.quantile(draws, levels)
    result = hierarchical_bootstrap(table, method="bca", random_state=14)
    percentile = hierarchical_bootstrap(table, method="percentile", random_state=14)
    scale = draws.std()
    assert abs(result.ci_low - want_low) < 0.15 * scale
    assert abs(result.ci_high - want_high) < 0.15 * scale
    assert result.ci_high - percentile.ci_high > 0.3 * scale  # skewed: BCa really moved the interval


def test_same_seed_same_interval_different_seed_different_interval():
    table = long_table(unbalanced_matrix(np.random.default_rng(1), 20, 3))
    first = hierarchical_bootstrap(table, random_state=42)
    assert hierarchical_bootstrap(table, random_state=42) == first
    other = hierarchical_bootstrap(table, random_state=43)
    assert (other.ci_low, other.ci_high) != (first.ci_low, first.ci_high)
    assert other.estimate == first.estimate
    from_generator = hierarchical_bootstrap(table, random_state=np.random.default_rng(42))
    assert (from_generator.ci_low, from_generator.ci_high) == (first.ci_low, first.ci_high)


def test_interval_does_not_depend_on_chunking_or_input_form(monkeypatch):
    matrix = unbalanced_matrix(np.random.default_rng(2), 12, 3)
    whole = hierarchical_bootstrap(matrix, n_resamples=3000, random_state=1)
    monkeypatch.setattr(bootstrap_module, "_CHUNK_ELEMENTS", 100)
    chunked = hierarchical_bootstrap(matrix, n_resamples=3000, random_state=1)
    assert chunked == whole
    assert hierarchical_bootstrap(long_table(matrix), n_resamples=3000, random_state=1) == whole


def test_missing_cells_are_never_drawn():
    matrix = np.array([[1.0, np.nan, np.nan], [0.0, 0.0, np.nan], [1.0, 1.0, 0.0]])
    result = hierarchical_bootstrap(matrix, n_resamples=2000, random_state=0)
    assert result.estimate == pytest.approx(3 / 6)
    assert (result.n_tasks, result.n_seeds, result.n_obs) == (3, 3, 6)
    assert 0.0 <= result.ci_low <= result.estimate <= result.ci_high <= 1.0


def test_degenerate_data_gives_a_point_interval_not_nan():
    for method in CI_METHODS.names():
        result = hierarchical_bootstrap(np.ones((6, 3)), method=method, n_resamples=500)
        assert (result.ci_low, result.estimate, result.ci_high, result.standard_error) == (1.0, 1.0, 1.0, 0.0)


def test_pluggable_statistic_and_named_statistics():
    matrix = unbalanced_matrix(np.random.default_rng(5), 10, 4)

    def mean_of_task_means(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
        return ((values * weights).sum(-1) / weights.sum(-1)).mean(-1)

    custom = hierarchical_bootstrap(matrix, statistic=mean_of_task_means, n_resamples=2000)
    named = hierarchical_bootstrap(matrix, statistic="task_mean", n_resamples=2000)
    assert (custom.estimate, custom.ci_low, custom.ci_high) == (named.estimate, named.ci_low, named.ci_high)
    assert custom.estimator.startswith("mean_of_task_means;")
    assert set(STATISTICS.names()) == {"cell_mean", "task_mean"}


def test_estimator_text_states_level_scheme_method_resamples_and_seed():
    result = hierarchical_bootstrap(np.arange(12.0).reshape(4, 3), n_resamples=1000, random_state=3)
    assert result.estimator.startswith("mean over tasks x seeds; 95% two-level bootstrap (tasks, then seeds")
    for fragment in ("BCa", "task jackknife", "1000 resamples", "seed 3"):
        assert fragment in result.estimator
    percentile = hierarchical_bootstrap(np.arange(12.0).reshape(4, 3), method="percentile", random_state=None)
    assert "percentile" in percentile.estimator and "unseeded" in percentile.estimator


def test_clear_errors_for_bad_input():
    good = long_table(np.ones((3, 2)))
    with pytest.raises(UsageError, match="at least 2 tasks"):
        hierarchical_bootstrap(np.ones((1, 4)))
    with pytest.raises(UnknownNameError, match="bca, percentile"):
        hierarchical_bootstrap(good, method="studentized")
    with pytest.raises(UnknownNameError, match="keep, resample"):
        hierarchical_bootstrap(good, within_task="shuffle")
    with pytest.raises(UnknownNameError, match="cell_mean, task_mean"):
        hierarchical_bootstrap(good, statistic="median")
    with pytest.raises(UsageError, match=r"lacks column\(s\) \['score'\]"):
        hierarchical_bootstrap(good, value="score")
    with pytest.raises(UsageError, match="more than one row"):
        hierarchical_bootstrap(pd.concat([good, good]))
    with pytest.raises(UsageError, match="must be numeric"):
        hierarchical_bootstrap(good.assign(value="high"))
    with pytest.raises(UsageError, match="2-D"):
        hierarchical_bootstrap(np.ones(5))
    with pytest.raises(UsageError, match="n_resamples"):
        hierarchical_bootstrap(good, n_resamples=1)
    with pytest.raises(UsageError, match="confidence_level"):
        hierarchical_bootstrap(good, confidence_level=95)


def test_the_bootstrap_defaults_have_one_home():
    """Every interval's default resamples, level and seed come from analysis's constants; the CLI's options
    (which load no pandas) state the same numbers."""
    import inspect as pyinspect

    from forge_eval import analysis
    from forge_eval._cli._options import bootstrap_seed_option, resamples_option
    from forge_eval.training.ablation import _inference, _summary

    def default(decorator, name):
        return next(p.default for p in decorator(lambda **_: None).__click_params__ if p.name == name)

    assert default(resamples_option, "resamples") == analysis.N_RESAMPLES
    assert default(bootstrap_seed_option, "bootstrap_seed") == analysis.RANDOM_STATE
    functions = [analysis.compare_runs, analysis.summarize_trials, _summary.summarize, _inference.sign_flip_p]
    for function in functions:
        parameters = pyinspect.signature(function).parameters
        for name, value in (("n_resamples", analysis.N_RESAMPLES), ("random_state", analysis.RANDOM_STATE)):
            if name in parameters and parameters[name].default is not pyinspect.Parameter.empty:
                assert parameters[name].default == value, (function.__name__, name)
