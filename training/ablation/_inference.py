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
"""

import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy import stats

ALPHA = 0.05
EXACT_MAX = 20  # 2^20 sign patterns, enumerated in chunks; more seeds use Monte Carlo
_MONTE_CARLO = 200_000
_CHUNK_BITS = 16


def sign_flip_p(differences: NDArray[np.float64] | list[float], *, random_state: int = 0) -> float:
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


def t_interval(differences: NDArray[np.float64], level: float) -> tuple[float, float] | None:
    """Student t interval of the mean (None with fewer than 2 values)."""
    n = differences.size
    if n < 2:
        return None
    mean = float(differences.mean())
    half = float(stats.t.ppf(0.5 + level / 2, n - 1) * differences.std(ddof=1) / math.sqrt(n))
    return mean - half, mean + half


def crossed_bootstrap(
    cells: NDArray[np.float64], level: float, *, n_resamples: int, random_state: int = 0
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


def runs_for_power(
    differences: NDArray[np.float64], alpha: float, power: float = 0.8, most: int = 1000
) -> int | None:
    """Runs a paired t-test at `alpha` needs for `power` against the observed mean difference at the
    observed spread (noncentral t); None when the difference or the spread is 0, or above `most`."""
    if differences.size < 2:
        return None
    mean, sd = abs(float(differences.mean())), float(differences.std(ddof=1))
    if mean == 0 or sd == 0:
        return None
    # the normal approximation undershoots the t test's n a little: start below it and walk up
    z = stats.norm.ppf(1 - alpha / 2) + stats.norm.ppf(power)
    for n in range(max(2, int((z * sd / mean) ** 2) - 2), most + 1):
        critical = stats.t.ppf(1 - alpha / 2, n - 1)
        if stats.nct.sf(critical, n - 1, mean / sd * math.sqrt(n)) >= power:
            return n
    return None


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
    p: float | None = None  # exact sign-flip p (differences only)
    p_adjusted: float | None = None  # Bonferroni: p x comparisons, at most 1
    runs_for_power: int | None = None  # runs for 80% power at the corrected alpha (differences only)

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
    random_state: int = 0,
    comparisons: int | None = None,
) -> RunLevel:
    """Summarise `cells` (seeds x tasks) over runs. With `comparisons` the cells are paired differences
    and the sign-flip test (Bonferroni over that many comparisons) and the runs for power come too."""
    per_seed = cells.mean(axis=1)
    t = t_interval(per_seed, level)
    boot = crossed_bootstrap(cells, level, n_resamples=n_resamples, random_state=random_state)
    extra: dict[str, Any] = {}
    if comparisons is not None:
        p = sign_flip_p(per_seed, random_state=random_state)
        extra = {
            "p": p,
            "p_adjusted": min(1.0, p * comparisons),
            "runs_for_power": runs_for_power(per_seed, ALPHA / comparisons),
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
