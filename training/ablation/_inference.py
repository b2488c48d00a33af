"""Run-level inference for an ablation: the training run (seed) is the unit of replication.

One training run decides every held-out cell of its seed, so cells of one seed are not independent:
intervals that resample tasks with each run held fixed leave the run-to-run variance of training out.
Here a comparison of variants a and b is made per seed (the same seed gives both the same initial weights
and data order), as the difference d_s = mean over held-out tasks of (b - a), and summarised over seeds:

- the mean of d_s with a Student t interval over seeds (conditional on the held-out task set);
- a crossed bootstrap: seeds and tasks resampled independently, so the interval also carries the
  variation of the task sample (Owen 2007, "The pigeonhole bootstrap"; written out because
  `scipy.stats.bootstrap` resamples one level only);
- an exact two-sided sign-flip (paired permutation) p over seeds: under "no difference" each d_s is as
  likely as -d_s, so all 2^n sign patterns are enumerated (a seeded Monte Carlo beyond `EXACT_MAX`).

Several comparisons (pairs of variants x metrics) are corrected together by Bonferroni: each interval is
taken at level 1 - alpha/m and each p is multiplied by m. With n runs the smallest sign-flip p is
2^(1-n), so fewer than 1 + log2(m/alpha) runs can never show a difference; `runs_needed` says how many.
A tied seed (d_s = 0, e.g. both variants at 100%) carries no sign: flipping it changes nothing, so with k
seeds that differ the smallest p is 2^(1-k) whatever n is (`smallest_p`), and the runs needed for power
(`runs_for_power`) are found by simulating the decision rule itself on runs drawn from the observed
per-seed differences, ties included.

A variant's own success is a mean of per-run success rates in [0, 1] whose runs mostly either learned the
task or did not: a t interval over 8 such runs covers the mean in as few as 34-92% of simulated ablations
(all runs at 100% give [100, 100] while 1 run in 10 fails). `bounded_interval` is the Wilson score
interval with the runs as the sample: a [0, 1] outcome's variance is at most mu (1 - mu), the Bernoulli's,
so the score interval with that bound holds whatever the run-to-run distribution, stays inside [0, 1] and
keeps a width when every run is at 100% (coverage at least 93% in the same simulations; it is
conservative, about twice a t interval's width, when runs agree in the middle of the range).
"""

import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy import stats

from forge_eval.analysis import RANDOM_STATE

ALPHA = 0.05
EXACT_MAX = 20  # 2^20 sign patterns, enumerated in chunks; more seeds use Monte Carlo
_MONTE_CARLO = 200_000
_CHUNK_BITS = 16


def sign_flip_p(
    differences: NDArray[np.float64] | list[float], *, random_state: int = RANDOM_STATE
) -> float:
    """Two-sided p of the paired sign-flip test of mean 0: the share of sign patterns whose |sum| is at
    least the observed |sum| (the observed pattern counts, so p >= 2^(1-n))."""
    d = np.asarray(differences, dtype=float)
    n = d.size
    if n == 0:
        return math.nan
    observed = abs(d.sum())
    tolerance = 1e-9 * max(1.0, np.abs(d).sum())  # equal sums must count as equal despite rounding
    if n > EXACT_MAX:
        rng = np.random.default_rng(random_state)
        signs = rng.choice((-1.0, 1.0), size=(_MONTE_CARLO, n))
        hits = int((np.abs(signs @ d) >= observed - tolerance).sum())
        return (hits + 1) / (_MONTE_CARLO + 1)
    # patterns k = 0 .. 2^n - 1, bit i of k flips d_i; chunks keep memory small
    low_bits = min(n, _CHUNK_BITS)
    low = ((np.arange(2**low_bits)[:, None] >> np.arange(low_bits)) & 1) * -2.0 + 1.0
    low_sums = low @ d[:low_bits]
    hits = 0
    for high in range(2 ** (n - low_bits)):
        high_signs = ((high >> np.arange(n - low_bits)) & 1) * -2.0 + 1.0
        sums = low_sums + high_signs @ d[low_bits:]
        hits += int((np.abs(sums) >= observed - tolerance).sum())
    return hits / 2**n


def runs_needed(comparisons: int, alpha: float = ALPHA) -> int:
    """The fewest runs whose smallest sign-flip p, 2^(1-n), reaches alpha / comparisons."""
    return 1 + math.ceil(math.log2(comparisons / alpha) - 1e-12)


def signed_runs(differences: NDArray[np.float64] | list[float]) -> int:
    """How many per-seed differences are not 0 (a tie carries no sign in the sign-flip test)."""
    d = np.asarray(differences, dtype=float)
    return int((np.abs(d) > 1e-12).sum())


def smallest_p(signed: int) -> float:
    """The smallest two-sided sign-flip p that `signed` non-zero differences allow, 2^(1-k) (1 for
    none): every tied seed's sign pattern gives the same sum, so ties only multiply both counts."""
    return 1.0 if signed == 0 else 2.0 ** (1 - signed)


def bounded_interval(values: NDArray[np.float64], level: float) -> tuple[float, float] | None:
    """Wilson score interval of the mean of `values` in [0, 1] with the values (runs) as the sample:
    mean +- z sqrt(mu (1 - mu) / n) solved for mu, the largest variance a [0, 1] outcome with mean mu can
    have (None without values)."""
    n = values.size
    if n == 0:
        return None
    p = float(np.clip(values.mean(), 0.0, 1.0))
    z = float(stats.norm.ppf(0.5 + level / 2))
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)


def t_interval(differences: NDArray[np.float64], level: float) -> tuple[float, float] | None:
    """Student t interval of the mean (None with fewer than 2 values)."""
    n = differences.size
    if n < 2:
        return None
    mean = float(differences.mean())
    half = float(stats.t.ppf(0.5 + level / 2, n - 1) * differences.std(ddof=1) / math.sqrt(n))
    return mean - half, mean + half


def crossed_bootstrap(
    cells: NDArray[np.float64], level: float, *, n_resamples: int, random_state: int = RANDOM_STATE
) -> tuple[float, float]:
    """Percentile interval of the grand mean of `cells` (seeds x tasks), seeds and tasks resampled
    independently with replacement. The mean over a drawn grid is w_s' C w_t / (n_s n_t), with w the
    draw counts, so no grid is ever built."""
    n_seeds, n_tasks = cells.shape
    rng = np.random.default_rng(random_state)
    seed_counts = _counts(rng.integers(0, n_seeds, (n_resamples, n_seeds)), n_seeds)
    task_counts = _counts(rng.integers(0, n_tasks, (n_resamples, n_tasks)), n_tasks)
    means = np.einsum("bi,ij,bj->b", seed_counts, cells, task_counts) / (n_seeds * n_tasks)
    low, high = np.quantile(means, [0.5 - level / 2, 0.5 + level / 2])
    return float(low), float(high)


def _counts(draws: NDArray[np.int64], size: int) -> NDArray[np.float64]:
    counts = np.zeros((draws.shape[0], size))
    np.add.at(counts, (np.arange(draws.shape[0])[:, None], draws), 1.0)
    return counts


_POWER_DRAWS = 1000  # simulated ablations per run count
_POWER_PATTERNS = 2000  # random sign patterns of the Monte Carlo sign-flip p (more than 12 signed seeds)
_EXACT_SIGNED = 12  # up to this many signed seeds the simulated sign-flip p is exact
_NORMAL_SIGNED = 40  # beyond this many, the sign-flip sum's normal approximation


def told_apart_share(
    draws: NDArray[np.float64], alpha: float, *, random_state: int = RANDOM_STATE
) -> float:
    """The share of simulated ablations (rows of per-seed differences) that the summary's rule tells
    apart at corrected level `alpha`: the t interval at 1 - alpha excludes 0 and the sign-flip p is at
    most alpha. The p is exact with up to 12 non-zero differences (ties dropped: they change neither count),
    a Monte Carlo over 2,000 shared sign patterns up to 40, the normal approximation of the sign-flip sum
    beyond."""
    b, n = draws.shape
    mean = draws.mean(axis=1)
    sd = draws.std(axis=1, ddof=1)
    half = stats.t.ppf(1 - alpha / 2, n - 1) * sd / math.sqrt(n)
    t_ok = np.abs(mean) > half
    signed = (np.abs(draws) > 1e-12).sum(axis=1)
    p = np.ones(b)
    observed = np.abs(draws.sum(axis=1))
    tolerance = 1e-9 * np.maximum(1.0, np.abs(draws).sum(axis=1))
    small = np.flatnonzero(t_ok & (signed >= 1) & (signed <= _EXACT_SIGNED))
    if small.size:
        # the non-zero differences of each draw, left-aligned and padded with zeros to 12 columns
        order = np.argsort(np.abs(draws[small]) <= 1e-12, axis=1, kind="stable")
        packed = np.take_along_axis(draws[small], order, axis=1)[:, :_EXACT_SIGNED]
        if packed.shape[1] < _EXACT_SIGNED:
            packed = np.pad(packed, ((0, 0), (0, _EXACT_SIGNED - packed.shape[1])))
        patterns = ((np.arange(2**_EXACT_SIGNED)[:, None] >> np.arange(_EXACT_SIGNED)) & 1) * -2.0 + 1.0
        sums = np.abs(patterns @ packed.T)  # patterns x draws
        p[small] = (sums >= observed[small] - tolerance[small]).mean(axis=0)
    middle = np.flatnonzero(t_ok & (signed > _EXACT_SIGNED) & (signed <= _NORMAL_SIGNED))
    if middle.size:
        rng = np.random.default_rng(random_state)
        signs = rng.choice((-1.0, 1.0), size=(_POWER_PATTERNS, n))
        hits = (np.abs(signs @ draws[middle].T) >= observed[middle] - tolerance[middle]).sum(axis=0)
        p[middle] = (hits + 1) / (_POWER_PATTERNS + 1)
    large = np.flatnonzero(t_ok & (signed > _NORMAL_SIGNED))
    if large.size:
        scale = np.sqrt((draws[large] ** 2).sum(axis=1))
        p[large] = 2 * stats.norm.sf(observed[large] / scale)
    return float((t_ok & (p <= alpha)).mean())


def runs_for_power(
    differences: NDArray[np.float64],
    alpha: float,
    power: float = 0.8,
    most: int = 500,
    *,
    random_state: int = RANDOM_STATE,
) -> int | None:
    """The fewest runs per variant with which the summary's decision rule (`told_apart_share`) tells the
    pair apart with probability `power` at corrected level `alpha`, when each run's difference is drawn
    from the observed per-seed differences (their spread and their share of ties); None when they are
    all 0 or more than `most` runs would be needed. Found by simulation (1,000 ablations per run count,
    common random numbers), doubling and then bisecting the number of runs."""
    d = np.asarray(differences, dtype=float)
    if d.size < 2 or signed_runs(d) == 0 or abs(float(d.mean())) < 1e-12:
        return None

    def enough(n: int) -> bool:
        rng = np.random.default_rng([random_state, n])
        draws = d[rng.integers(0, d.size, (_POWER_DRAWS, n))]
        return told_apart_share(draws, alpha, random_state=random_state) >= power

    low = max(2, 1 + math.ceil(math.log2(1 / alpha) - 1e-12)) - 1  # fewer runs can never be told apart
    high = low + 1
    while not enough(high):
        if high >= most:
            return None
        low, high = high, min(most, 2 * high)
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (low, mid) if enough(mid) else (mid, high)
    return high


@dataclass(frozen=True)
class RunLevel:
    """A mean over runs (a variant's success, or the per-seed difference of two variants) with its
    run-level intervals at `level` and, for differences, the sign-flip test."""

    estimate: float
    per_seed: dict[str, float]
    n_runs: int
    n_tasks: int
    level: float
    t_low: float | None
    t_high: float | None
    boot_low: float
    boot_high: float
    bounded_low: float | None = None  # Wilson over runs, inside [0, 1] (a variant's success only)
    bounded_high: float | None = None
    p: float | None = None  # exact sign-flip p (differences only)
    p_adjusted: float | None = None  # Bonferroni: p x comparisons, at most 1
    signed_runs: int | None = None  # seeds whose difference is not 0 (differences only)
    smallest_p_adjusted: float | None = None  # the least corrected p those seeds allow (differences only)
    runs_for_power: int | None = None  # runs for 80% power of the decision rule (differences only)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def excludes_zero(self) -> bool:
        return self.t_low is not None and self.t_high is not None and (self.t_low > 0 or self.t_high < 0)


def run_level(
    cells: NDArray[np.float64],
    seeds: list[str],
    level: float,
    *,
    n_resamples: int,
    random_state: int = RANDOM_STATE,
    comparisons: int | None = None,
) -> RunLevel:
    """Summarise `cells` (seeds x tasks) over runs. Without `comparisons` the cells are success rates and
    their interval bounded to [0, 1] comes too; with it they are paired differences, and the sign-flip
    test (Bonferroni over that many comparisons), the seeds that carry a sign and the runs for power
    come instead."""
    per_seed = cells.mean(axis=1)
    t = t_interval(per_seed, level)
    boot = crossed_bootstrap(cells, level, n_resamples=n_resamples, random_state=random_state)
    extra: dict[str, Any] = {}
    if comparisons is None:
        bounded = bounded_interval(per_seed, level)
        if bounded is not None:
            extra = {"bounded_low": bounded[0], "bounded_high": bounded[1]}
    else:
        p = sign_flip_p(per_seed, random_state=random_state)
        signed = signed_runs(per_seed)
        extra = {
            "p": p,
            "p_adjusted": min(1.0, p * comparisons),
            "signed_runs": signed,
            "smallest_p_adjusted": min(1.0, smallest_p(signed) * comparisons),
            "runs_for_power": runs_for_power(per_seed, ALPHA / comparisons, random_state=random_state),
        }
    return RunLevel(
        estimate=float(per_seed.mean()),
        per_seed={s: float(v) for s, v in zip(seeds, per_seed, strict=True)},
        n_runs=len(seeds),
        n_tasks=cells.shape[1],
        level=level,
        t_low=None if t is None else t[0],
        t_high=None if t is None else t[1],
        boot_low=boot[0],
        boot_high=boot[1],
        **extra,
    )
