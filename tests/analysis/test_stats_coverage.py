"""Coverage of the 95% intervals in simulation, against a known truth.

Estimand. Resampling tasks treats the benchmark's tasks as a sample from a population of
tasks, so the intervals estimate the population mean, and each repetition draws fresh tasks:
task rate p ~ Beta(A, B); per (task, seed) a seed-level rate q ~ Beta(KAPPA p, KAPPA (1 - p))
(seed noise, E[q | p] = p); per epoch a Bernoulli(q) trial. The truths are closed forms of
Beta moments: E[success rate] = A / (A + B), E[pass^k] = E[q^k], E[pass@k] = 1 - E[(1-q)^k]
(the per-cell estimators are unbiased for q^k and 1 - (1-q)^k given q).

Scenario: heterogeneous tasks (Beta(0.6, 0.9): many near-0 and near-1 tasks, as in agent
benchmarks), 40 tasks, 3 seeds, 4 epochs. With 1000 repetitions a coverage estimate has a
Monte-Carlo SE of 0.7 points (93-97% is +-3 SE around 95%); with 300, 1.3 points (92-98%).

The default two-level scheme counts seed/epoch noise twice (module docstring of _bootstrap),
so it may over-cover where that noise dominates; the tests pin down both schemes.
"""

from math import prod

import numpy as np
import pandas as pd
import pytest

from forge_eval.analysis import hierarchical_bootstrap, paired_difference, summarize_trials

A, B, KAPPA = 0.6, 0.9, 10.0
N_TASKS, N_SEEDS, N_EPOCHS = 40, 3, 4


def mean_q_power(a: float, b: float, k: int) -> float:
    """E[q^k] for q | p ~ Beta(KAPPA p, KAPPA (1-p)), p ~ Beta(a, b).

    E[q^k | p] = prod_i (KAPPA p + i) / (KAPPA + i), a polynomial in p; E[p^j] = prod_i (a+i)/(a+b+i).
    """
    polynomial = np.polynomial.Polynomial([1.0])
    for i in range(k):
        polynomial = polynomial * np.polynomial.Polynomial([i, KAPPA])
    moments = [prod((a + i) / (a + b + i) for i in range(j)) for j in range(k + 1)]
    return float(np.dot(polynomial.coef, moments) / prod(KAPPA + i for i in range(k)))


def true_values(epochs: int) -> dict[str, float]:
    truth = {"success_rate": A / (A + B)}
    for k in range(2, epochs + 1):
        truth[f"pass@{k}"] = 1 - mean_q_power(B, A, k)  # 1 - q ~ the same model with A, B swapped
        truth[f"pass^{k}"] = mean_q_power(A, B, k)
    return truth


def trial_outcomes(rng: np.random.Generator, epochs: int = N_EPOCHS) -> np.ndarray:
    """(tasks, seeds, epochs) pass/fail outcomes of one repetition, fresh tasks each time."""
    p = rng.beta(A, B, size=(N_TASKS, 1))
    q = rng.beta(KAPPA * p, KAPPA * (1 - p), size=(N_TASKS, N_SEEDS))
    return rng.random((N_TASKS, N_SEEDS, epochs)) < q[..., None]


def test_truth_formula_matches_brute_force_simulation():
    rng = np.random.default_rng(0)
    p = rng.beta(A, B, size=400_000)
    q = rng.beta(KAPPA * p, KAPPA * (1 - p))
    assert true_values(3)["pass^3"] == pytest.approx(np.mean(q**3), abs=2e-3)
    assert true_values(3)["pass@2"] == pytest.approx(1 - np.mean((1 - q) ** 2), abs=2e-3)


@pytest.mark.slow
@pytest.mark.parametrize("method", ["bca", "percentile"])
def test_default_interval_covers_the_population_success_rate(method):
    rng = np.random.default_rng(2024)
    truth, repetitions, hits = true_values(1)["success_rate"], 1000, 0
    for repetition in range(repetitions):
        cells = trial_outcomes(rng).mean(axis=2)
        result = hierarchical_bootstrap(cells, method=method, n_resamples=2000, random_state=repetition)
        hits += result.ci_low <= truth <= result.ci_high
    coverage = hits / repetitions
    print(f"\ncoverage[success_rate, two-level, {method}] = {coverage:.3f} ({repetitions} repetitions)")
    assert 0.93 <= coverage <= 0.97


@pytest.mark.slow
def test_summarize_trials_covers_every_metric():
    """The whole path from a trials table, 3 epochs: success_rate, pass@2, pass^2, pass@3, pass^3."""
    rng = np.random.default_rng(7)
    epochs, repetitions = 3, 300
    truth = true_values(epochs)
    tasks, seeds, epoch = (a.ravel() for a in np.indices((N_TASKS, N_SEEDS, epochs)))
    hits = {scheme: dict.fromkeys(truth, 0) for scheme in ("resample", "keep")}
    for repetition in range(repetitions):
        passed = trial_outcomes(rng, epochs).ravel()
        trials = pd.DataFrame(
            {
                "task_id": tasks,
                "seed": seeds,
                "epoch": epoch + 1,
                "score": passed.astype(float),
                "passed": passed,
            }
        )
        for scheme, counts in hits.items():
            summary = summarize_trials(
                trials,
                epochs=epochs,
                graded=False,
                n_resamples=1000,
                within_task=scheme,
                random_state=repetition,
            )
            for name, value in truth.items():
                counts[name] += summary[name].ci_low <= value <= summary[name].ci_high
    for scheme, counts in hits.items():
        print(f"\ncoverage[summarize_trials, {scheme}] =", {n: c / repetitions for n, c in counts.items()})
    for name in truth:
        assert 0.92 <= hits["keep"][name] / repetitions <= 0.98, name
        assert hits["resample"][name] / repetitions >= 0.93, name  # conservative, never short


@pytest.mark.slow
def test_paired_difference_covers_a_known_shift():
    """Run b's rates are run a's task rates + 0.1 (p drawn in [0.1, 0.85], so no clipping): the true
    mean shift is exactly 0.1. Pairing cancels the task effect, so only seed/epoch noise is left:
    the case where the two-level scheme is most conservative."""
    rng = np.random.default_rng(11)
    repetitions = 300
    hits = dict.fromkeys(("resample", "keep"), 0)
    tasks, seeds = (a.ravel() for a in np.indices((N_TASKS, N_SEEDS)))
    for repetition in range(repetitions):
        p = rng.uniform(0.1, 0.85, size=(N_TASKS, 1))
        runs = [
            pd.DataFrame(
                {
                    "task_id": tasks,
                    "seed": seeds,
                    "value": rng.binomial(N_EPOCHS, np.broadcast_to(p + shift, (N_TASKS, N_SEEDS))).ravel()
                    / N_EPOCHS,
                }
            )
            for shift in (0.0, 0.1)
        ]
        for scheme in hits:
            result = paired_difference(*runs, n_resamples=1000, within_task=scheme, random_state=repetition)
            hits[scheme] += result.difference.ci_low <= 0.1 <= result.difference.ci_high
    coverage = {scheme: count / repetitions for scheme, count in hits.items()}
    print(f"\ncoverage[paired difference, BCa] = {coverage} ({repetitions} repetitions)")
    assert 0.92 <= coverage["keep"] <= 0.98
    assert coverage["resample"] >= coverage["keep"]
