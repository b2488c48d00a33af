"""Run-level inference of the credit ablation, against scipy, closed forms and simulation.

The unit is the training run: these tests construct runs with a known run-level effect and large
between-run variance and check the intervals' coverage, that two runs can never be "told apart" however
large and consistent the difference, and the exact sign-flip p against scipy's permutation test; tied
seeds (both variants at 100%) against the closed form of the sign-flip floor and the power they leave,
and a variant's interval bounded to [0, 100] against scipy and by simulation near 100%.
"""

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from forge_eval.training.ablation._inference import (
    bounded_interval,
    crossed_bootstrap,
    runs_for_power,
    runs_needed,
    sign_flip_p,
    smallest_p,
    t_interval,
)
from forge_eval.training.ablation._summary import summarize


@pytest.mark.parametrize("n", [2, 3, 5, 8, 11])
def test_sign_flip_p_is_scipys_exact_paired_permutation_test(n):
    rng = np.random.default_rng(n)
    d = np.round(rng.normal(0.2, 1.0, n), 2)
    reference = stats.permutation_test(
        (d,),
        np.mean,
        permutation_type="samples",
        alternative="two-sided",
        n_resamples=np.inf,  # every sign pattern: exact
    ).pvalue
    assert sign_flip_p(d) == pytest.approx(reference, abs=1e-12)


def test_sign_flip_p_counts_ties_and_its_floor_is_two_to_the_one_minus_n():
    assert sign_flip_p([0.5, 0.5]) == 0.5  # two runs that agree: +-, -+ lose, ++ and -- tie
    assert sign_flip_p([1.0] * 8) == 2 / 2**8
    assert sign_flip_p([0.0, 0.0, 0.0]) == 1.0
    # beyond the exact limit: a seeded Monte Carlo close to the exact floor
    assert sign_flip_p([1.0] * 22) == pytest.approx(1 / 200_001, abs=1e-5)


@pytest.mark.parametrize("comparisons", [1, 2, 6, 12, 18])
def test_runs_needed_is_the_first_n_whose_smallest_p_survives_bonferroni(comparisons):
    n = runs_needed(comparisons)
    assert 2.0 ** (1 - n) <= 0.05 / comparisons < 2.0 ** (2 - n)
    assert runs_needed(6) == 8  # 3 pairs x 2 metrics: the ablation's default family


def test_t_interval_is_scipys():
    d = np.array([0.3, -0.1, 0.5, 0.2, 0.9, 0.0, 0.4, 0.1])
    low, high = t_interval(d, 0.99)
    reference = stats.ttest_1samp(d, 0.0).confidence_interval(0.99)
    assert (low, high) == pytest.approx((reference.low, reference.high))
    assert t_interval(d[:1], 0.95) is None


def test_crossed_bootstrap_variance_matches_the_closed_form_of_an_additive_grid():
    """For cells a_i + b_j, a resampled grid's mean is mean(a over drawn seeds) + mean(b over drawn
    tasks), two independent means of draws with replacement: variance var(a)/R + var(b)/C (ddof 0)."""
    rng = np.random.default_rng(0)
    a, b = rng.normal(0, 0.4, 6), rng.normal(0, 0.1, 9)
    cells = a[:, None] + b[None, :]
    expected_sd = math.sqrt(a.var() / a.size + b.var() / b.size)
    low, high = crossed_bootstrap(cells, 0.95, n_resamples=40_000, random_state=1)
    # the mean of draws is near normal here; its 95% interval spans about 2 x 1.96 sd
    assert (high - low) / (2 * 1.96) == pytest.approx(expected_sd, rel=0.05)
    assert low < cells.mean() < high


def _run(seed: int, success: list[float], tasks: int = 6) -> dict:
    """A finished run with held-out success `success[k]` on every task at checkpoint k."""
    evals = [
        {"step": 10 * k, "success": v, "reward": v, "per_task": {f"t{i}": v for i in range(tasks)}}
        for k, v in enumerate(success)
    ]
    train = [{"step": s, "reward": 0.5, "internal_entropy": 1.0} for s in range(10 * (len(success) - 1))]
    return {"config": {"seed": seed}, "eval": evals, "train": train, "seconds_per_step": 1.0}


def test_two_runs_are_never_told_apart_and_the_verdict_says_how_many_are_needed():
    runs = {"never": [_run(s, [0, 0, 0]) for s in (0, 1)], "always": [_run(s, [0, 1, 1]) for s in (0, 1)]}
    data = summarize(runs, n_resamples=500)
    pair = data["pairs"][0]
    # the largest, most consistent difference there is: +100 points in both runs
    assert pair["final"]["per_seed"] == {"0": 1.0, "1": 1.0}
    assert pair["final"]["p"] == 0.5 and not any(pair["told_apart"].values())
    assert data["inference"]["runs_needed"] == 7  # one pair x 2 metrics: 2^-6 <= 0.025 < 2^-5
    assert data["verdict"]["headline"].startswith("2 run(s) per variant cannot show a difference at 95%")
    assert "at least 7 runs per variant are needed" in data["verdict"]["headline"]


def test_enough_runs_tell_a_consistent_difference_apart_and_not_a_null_one():
    curves = {"never": [0, 0, 0, 0], "late": [0, 0, 0, 1], "early": [0, 1, 1, 1]}
    noisy = [0.0, 1.0, 0.5, 0.0, 1.0, 0.5, 0.0, 1.0]
    data = summarize({v: [_run(s, c) for s in range(8)] for v, c in curves.items()}, n_resamples=500)
    assert data["inference"] | {"level": None} == {
        "unit": "training run (seed)",
        "n_runs": 8,
        "comparisons": 6,
        "correction": "Bonferroni over 3 pair(s) x 2 metrics = 6 comparisons",
        "level": None,
        "runs_needed": 8,
        "enough_runs": True,
    }
    never_late, never_early, late_early = data["verdict"]["pairs"]
    assert never_late.startswith("late beats never on final held-out success (late - never: +100.0 points")
    assert never_early.startswith("early beats never")
    assert late_early.startswith("late and early are not told apart on final held-out success")
    assert "but early learned sooner" in late_early
    assert data["verdict"]["headline"] == "3 of 3 pairs of variants are told apart over 8 runs per variant."
    assert (
        data["verdict"]["learned"]
        == "Runs reaching 80% final held-out success: never 0/8, late 8/8, early 8/8."
    )
    # a difference that changes sign from run to run is not told apart
    mixed = {
        "a": [_run(s, [0, 0.5]) for s in range(8)],
        "b": [_run(s, [0, v]) for s, v in enumerate(noisy)],
    }
    same = summarize(mixed, n_resamples=500)
    assert not any(same["pairs"][0]["told_apart"].values())
    assert same["verdict"]["headline"] == "No pair of variants is told apart over 8 runs per variant."


def _simulated_cells(rng: np.random.Generator, n_seeds: int, n_tasks: int) -> tuple[np.ndarray, float]:
    """Paired differences of two variants whose runs either learn the task or not (a run that learned
    solves a task with p 0.95, else 0.05), b learning in 90% of runs and a in 50%: the per-seed
    difference is bimodal and the between-run variance dwarfs the task-level noise."""
    learned_a = rng.random((n_seeds, 1)) < 0.5
    learned_b = rng.random((n_seeds, 1)) < 0.9
    solved_a = rng.random((n_seeds, n_tasks)) < np.where(learned_a, 0.95, 0.05)
    solved_b = rng.random((n_seeds, n_tasks)) < np.where(learned_b, 0.95, 0.05)
    return solved_b.astype(float) - solved_a, (0.9 - 0.5) * (0.95 - 0.05)


@pytest.mark.slow
def test_run_level_intervals_cover_the_run_level_effect_by_simulation():
    rng = np.random.default_rng(2026)
    n_sims, hits_t, hits_boot = 2000, 0, 0
    for k in range(n_sims):
        cells, truth = _simulated_cells(rng, n_seeds=8, n_tasks=14)
        low, high = t_interval(cells.mean(axis=1), 0.95)
        hits_t += low <= truth <= high
        low, high = crossed_bootstrap(cells, 0.95, n_resamples=1000, random_state=k)
        hits_boot += low <= truth <= high
    # 2000 simulations: a binomial standard error of 0.5 points around 95%
    assert 0.935 <= hits_t / n_sims <= 0.97
    # percentile intervals over 8 runs are a little short (the bootstrap's variance has (n-1)/n)
    assert 0.9 <= hits_boot / n_sims <= 0.97
    # and a test at 5%: when both variants learn alike, the sign-flip test rejects at most ~5% of the time
    rejections = 0
    for _ in range(1000):
        learned = rng.random((2, 8, 1)) < 0.7
        solved = rng.random((2, 8, 14)) < np.where(learned, 0.95, 0.05)
        rejections += sign_flip_p((solved[1].astype(float) - solved[0]).mean(axis=1)) <= 0.05
    assert rejections / 1000 <= 0.065


def test_the_summary_shows_every_seed_and_a_band_over_runs():
    runs = {"a": [_run(s, [0, 0.5 * s]) for s in range(3)], "b": [_run(s, [0, 1]) for s in range(3)]}
    curve = summarize(runs, n_resamples=200)["variants"]["a"]["curves"]["heldout_success"]
    assert curve["per_seed"] == {"0": [0.0, 0.0], "1": [0.0, 0.5], "2": [0.0, 1.0]}
    assert curve["mean"] == [0.0, 0.5]
    half = stats.t.ppf(0.975, 2) * 0.5 / math.sqrt(3)
    assert curve["low"][1] == pytest.approx(0.5 - half) and curve["high"][1] == pytest.approx(0.5 + half)
    assert list(itertools.chain(curve["low"][:1], curve["high"][:1])) == [0.0, 0.0]


def _rule_power(d: np.ndarray, n: int, alpha: float, n_sims: int, rng: np.random.Generator) -> float:
    """The share of ablations of n runs, each run's difference drawn from `d`, that the summary's rule
    tells apart, computed with the summary's own functions (t interval at 1 - alpha, exact sign-flip p)."""
    told = 0
    for _ in range(n_sims):
        draw = rng.choice(d, n)
        low, high = t_interval(draw, 1 - alpha)
        told += (low > 0 or high < 0) and sign_flip_p(draw) <= alpha
    return told / n_sims


def test_a_tied_seed_carries_no_sign_and_the_floor_is_two_to_the_one_minus_the_signed_seeds():
    # 8 seeds, one tied: the smallest p is that of 7 seeds, whatever the tied seed's value would add
    assert sign_flip_p([1.0] * 7 + [0.0]) == smallest_p(7) == 2.0**-6
    assert sign_flip_p([0.3, -0.2, 0.0, 0.0, 0.5]) == pytest.approx(sign_flip_p([0.3, -0.2, 0.5]))
    # three variants (6 comparisons): x at 100% in every run, y only in seed 0, z never
    runs = {
        "x": [_run(s, [0, 1]) for s in range(8)],
        "y": [_run(s, [0, 1 if s == 0 else 0]) for s in range(8)],
        "z": [_run(s, [0, 0]) for s in range(8)],
    }
    data = summarize(runs, n_resamples=300)
    x_y, x_z, y_z = data["pairs"]
    assert x_y["final"]["signed_runs"] == 7
    assert x_y["final"]["smallest_p_adjusted"] == pytest.approx(6 * 2.0**-6)  # 0.094 > 0.05
    assert x_y["final"]["p_adjusted"] == pytest.approx(6 * 2.0**-6) and not any(x_y["told_apart"].values())
    assert x_z["told_apart"]["final"] and x_z["final"]["signed_runs"] == 8
    sentence = data["verdict"]["pairs"][0]
    assert sentence.startswith("x and y are not told apart")
    assert (
        "0 of 8 seeds higher, 7 lower, 1 tied: only 7 seeds carry a sign, so the smallest corrected p they "
        "allow is 0.0938, and no outcome of these seeds could tell the pair apart" in sentence
    )
    # the runs needed: each run ties with probability 1/8 and needs >= 8 signed seeds (2^-7 <= 0.05/6), so
    # the t interval aside (it excludes 0 whenever 8 of n runs differ by 1), P(Binomial(n, 7/8) >= 8)
    closed_form = next(n for n in range(8, 40) if stats.binom.sf(7, n, 7 / 8) >= 0.8)
    assert closed_form == 10
    assert x_y["final"]["runs_for_power"] == closed_form
    assert "about 10 runs per variant would tell a difference this large apart 80% of the time" in sentence


@pytest.mark.parametrize(
    "d",
    [
        [1.0] * 7 + [0.0],
        [0.5, 0.5, 0.0, 0.0, 0.5, 0.25, 0.75, 0.5],  # a quarter tied
        [0.5, 0.5, 0.0, 0.0, 0.5, -0.1, 0.75, 0.5],  # a quarter tied, one the other way
    ],
)
def test_runs_for_power_is_the_decision_rules_own_power_by_simulation(d):
    """With n = runs_for_power(d), ablations of n runs drawn from d are told apart by the summary's own
    functions at least ~80% of the time, and with n - 1 runs less often (Monte Carlo error 1.3 points)."""
    d = np.asarray(d)
    alpha = 0.05 / 6
    n = runs_for_power(d, alpha)
    assert n is not None and runs_needed(6) <= n <= 16
    rng = np.random.default_rng(1)
    assert _rule_power(d, n, alpha, 1500, rng) >= 0.8 - 0.035
    assert _rule_power(d, n - 1, alpha, 1500, rng) < 0.8 + 0.035


def test_runs_for_power_edges():
    # no spread: every draw is told apart as soon as the sign-flip floor allows it, 2^(1-n) <= alpha
    assert runs_for_power(np.array([0.2, 0.2, 0.2]), 0.05) == 6
    assert runs_for_power(np.array([0.0, 0.0, 0.0]), 0.05) is None  # nothing to detect
    assert runs_for_power(np.array([0.001, -0.5, 0.5]), 0.05) is None  # more than 500 runs


def test_bounded_interval_is_wilsons_with_the_runs_as_the_sample():
    # runs at 0 or 100%: the Wilson interval of a binomial count, as scipy computes it
    for values in ([1.0] * 8, [1.0] * 7 + [0.0], [1, 0, 1, 0, 0, 1, 1, 1]):
        v = np.asarray(values, dtype=float)
        reference = stats.binomtest(int(v.sum()), v.size).proportion_ci(0.95, method="wilson")
        assert bounded_interval(v, 0.95) == pytest.approx((reference.low, reference.high), abs=1e-9)
    low, high = bounded_interval(np.ones(8), 0.95)
    assert high == 1.0 and low == pytest.approx(8 / (8 + 1.959964**2))  # a width at 100%
    low, high = bounded_interval(np.array([1.0, 1.0, 0.93, 1.0, 0.86, 1.0]), 0.99)
    assert 0.0 <= low < high <= 1.0
    assert bounded_interval(np.array([]), 0.95) is None


def test_bounded_interval_covers_near_100_percent_where_the_t_interval_does_not():
    """8 runs of 14 held-out tasks; a run learns the task (solving each with p_learned) with probability
    lam, else solves each with p 0.05, as in the ablation, or its rate is Beta around mu. Near 100% the
    t interval over runs covers the mean success in as few as a third of the ablations (every run at
    100% gives [100, 100]); the Wilson interval over runs covers at least 93% everywhere."""
    rng = np.random.default_rng(36)
    n_sims, n_runs, n_tasks = 3000, 8, 14
    scenarios = []
    for lam, p_learned in ((0.5, 0.95), (0.9, 0.95), (0.9, 1.0), (0.95, 1.0), (1.0, 0.95)):
        learned = rng.random((n_sims, n_runs, 1)) < lam
        rate = np.where(learned, p_learned, 0.05)
        scenarios.append((rate, lam * p_learned + (1 - lam) * 0.05))
    for mu in (0.8, 0.95, 0.99):
        scenarios.append((rng.beta(20 * mu, 20 * (1 - mu), (n_sims, n_runs, 1)), mu))
    t_coverage = []
    for rate, truth in scenarios:
        per_run = (rng.random((n_sims, n_runs, n_tasks)) < rate).mean(axis=2)
        bounded = np.array([bounded_interval(row, 0.95) for row in per_run])
        t = np.array([t_interval(row, 0.95) for row in per_run])
        assert np.all((bounded >= 0) & (bounded <= 1))
        covered = (bounded[:, 0] <= truth + 1e-12) & (truth - 1e-12 <= bounded[:, 1])
        assert covered.mean() >= 0.93, (truth, covered.mean())
        t_coverage.append(((t[:, 0] <= truth + 1e-12) & (truth - 1e-12 <= t[:, 1])).mean())
    assert min(t_coverage) < 0.5  # the interval this replaces
