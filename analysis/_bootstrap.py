"""Seeded two-level (hierarchical) bootstrap over tasks and seeds.

Hand-written because no library resamples two levels: `scipy.stats.bootstrap` draws one
level of observations, and Inspect's bootstraps are unseeded and per log. The interval
arithmetic follows scipy (mid-rank bias, linear quantiles) so that with one seed per task
the results agree with `scipy.stats.bootstrap` within Monte-Carlo error.

Design: tasks are treated as drawn from a population of tasks, and seeds as drawn per task,
so the interval targets the population mean of the benchmark's task distribution (not the
mean of this fixed task set). The default resamples seeds with replacement inside each drawn
task (`within_task="resample"`). That counts the within-task (seed and epoch) spread a second
time, since it is already part of the spread of task means, so the interval is conservative
when that noise dominates task heterogeneity, e.g. for paired differences, where the task
effect cancels. `within_task="keep"` (the cluster bootstrap: drawn tasks keep their seeds)
has the right variance for this estimand in that case; see tests/analysis/test_stats_coverage.py.
"""

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray
from scipy.special import ndtr, ndtri

from forge_eval._errors import UsageError
from forge_eval._registry import Registry
from forge_eval.analysis._cells import CellGrid, grid_from_array, grid_from_frame

#: The bootstrap's defaults, one home for every interval forge-eval reports (runs, comparisons, behavior,
#: ablations): resamples per interval, the interval's level, and the resampling's seed (a report is
#: reproducible from its run directory).
N_RESAMPLES = 10_000
CONFIDENCE_LEVEL = 0.95
RANDOM_STATE = 0

RandomState = int | np.random.Generator | None

# Elements per gathered chunk of resamples: bounds memory (~16 MB per array) whatever the size.
_CHUNK_ELEMENTS = 2_000_000


class Statistic(Protocol):
    """Reduces cell values over the last two axes (tasks, seeds) where `weights` is 1."""

    def __call__(self, values: NDArray[np.float64], weights: NDArray[np.float64]) -> NDArray[np.float64]: ...


@dataclass(frozen=True)
class NamedStatistic:
    function: Statistic
    description: str


STATISTICS: Registry[NamedStatistic] = Registry("bootstrap statistic")


def _cell_mean(values: NDArray[np.float64], weights: NDArray[np.float64]) -> NDArray[np.float64]:
    return (values * weights).sum(axis=(-2, -1)) / weights.sum(axis=(-2, -1))


def _task_mean(values: NDArray[np.float64], weights: NDArray[np.float64]) -> NDArray[np.float64]:
    per_task = (values * weights).sum(axis=-1) / weights.sum(axis=-1)
    return per_task.mean(axis=-1)


STATISTICS.register("cell_mean", NamedStatistic(_cell_mean, "mean over tasks x seeds"))
STATISTICS.register("task_mean", NamedStatistic(_task_mean, "mean over tasks of per-task means over seeds"))


@dataclass(frozen=True)
class BootstrapResult:
    """A point estimate with its two-level bootstrap interval.

    `estimator` states, in words, what was estimated and how (for reports and results.json).
    """

    estimate: float
    ci_low: float
    ci_high: float
    standard_error: float
    method: str
    confidence_level: float
    n_resamples: int
    n_tasks: int
    n_seeds: int
    n_obs: int
    estimator: str


@dataclass(frozen=True)
class _Distribution:
    """What an interval method may use: estimates, bootstrap draws, leave-one-task-out values."""

    estimate: NDArray[np.float64]  # (metrics,)
    draws: NDArray[np.float64]  # (resamples, metrics)
    jackknife: NDArray[np.float64]  # (tasks, metrics)


@dataclass(frozen=True)
class CIMethod:
    interval: Callable[[_Distribution, float], tuple[NDArray[np.float64], NDArray[np.float64]]]
    label: str


CI_METHODS: Registry[CIMethod] = Registry("bootstrap method")


def _quantiles(draws: NDArray[np.float64], low: NDArray, high: NDArray) -> tuple[NDArray, NDArray]:
    """Per-metric quantiles at (possibly per-metric) levels, linear interpolation as in scipy."""
    n_metrics = draws.shape[1]
    low, high = np.broadcast_to(low, n_metrics), np.broadcast_to(high, n_metrics)
    pairs = np.array([np.quantile(draws[:, m], [low[m], high[m]]) for m in range(n_metrics)])
    return pairs[:, 0], pairs[:, 1]


def _percentile(dist: _Distribution, alpha: float) -> tuple[NDArray, NDArray]:
    return _quantiles(dist.draws, np.asarray(alpha), np.asarray(1 - alpha))


def _bca(dist: _Distribution, alpha: float) -> tuple[NDArray, NDArray]:
    """BCa (Efron 1987; Efron & Tibshirani 1993 eq. 14.10-14.15) with a jackknife over tasks.

    z0 = Phi^-1(mid-rank share of draws below the estimate), clipped to +-Phi^-1(1 - 1/(2B))
    so a point mass never yields an infinite correction; acceleration
    a = sum(d^3) / (6 * sum(d^2)^1.5), d = mean(theta_(-t)) - theta_(-t) over left-out tasks t,
    and a = 0 when every leave-one-task-out estimate is equal.
    """
    n = dist.draws.shape[0]
    below = (dist.draws < dist.estimate).sum(axis=0) + (dist.draws <= dist.estimate).sum(axis=0)
    share = np.clip(below / (2 * n), 0.5 / n, 1 - 0.5 / n)
    z0 = ndtri(share)
    d = dist.jackknife.mean(axis=0) - dist.jackknife
    spread = (d**2).sum(axis=0)
    accel = np.divide((d**3).sum(axis=0), 6 * spread**1.5, out=np.zeros_like(spread), where=spread > 0)
    z_low, z_high = ndtri(alpha), ndtri(1 - alpha)
    low = ndtr(z0 + (z0 + z_low) / (1 - accel * (z0 + z_low)))
    high = ndtr(z0 + (z0 + z_high) / (1 - accel * (z0 + z_high)))
    return _quantiles(dist.draws, low, high)


CI_METHODS.register("percentile", CIMethod(_percentile, "percentile"))
CI_METHODS.register("bca", CIMethod(_bca, "BCa (bias from the draws, acceleration from a task jackknife)"))


@dataclass(frozen=True)
class WithinTask:
    """How a drawn task's seeds are drawn: `positions(rng, drawn_counts, width)` -> seed slots."""

    positions: Callable[[np.random.Generator, NDArray[np.int64], int], NDArray[np.intp]]
    label: str


def _resample_seeds(rng: np.random.Generator, drawn_counts: NDArray[np.int64], width: int) -> NDArray:
    if width == 1:  # one seed per task: nothing to draw
        return np.zeros((*drawn_counts.shape[:2], 1), dtype=np.intp)
    # floor(u * m) is uniform on 0..m-1; the minimum guards u * m rounding up to m.
    uniform = rng.random((*drawn_counts.shape[:2], width))
    return np.minimum((uniform * drawn_counts).astype(np.intp), drawn_counts - 1)


def _keep_seeds(rng: np.random.Generator, drawn_counts: NDArray[np.int64], width: int) -> NDArray:
    return np.broadcast_to(np.arange(width), (*drawn_counts.shape[:2], width))


WITHIN_TASK: Registry[WithinTask] = Registry("within-task scheme")
WITHIN_TASK.register(
    "resample", WithinTask(_resample_seeds, "two-level bootstrap (tasks, then seeds within task)")
)
WITHIN_TASK.register("keep", WithinTask(_keep_seeds, "task-level bootstrap (drawn tasks keep their seeds)"))
# The project's design asks for two-level resampling; "keep" is the alternative (module docstring).
DEFAULT_WITHIN_TASK = "resample"


def _streams(random_state: RandomState) -> tuple[np.random.Generator, np.random.Generator]:
    """Independent task and seed streams: draws do not depend on the chunk size."""
    tasks, seeds = np.random.default_rng(random_state).spawn(2)
    return tasks, seeds


def _resamples(
    counts: NDArray[np.int64],
    width: int,
    n_resamples: int,
    chunk: int,
    within_task: WithinTask,
    random_state: RandomState,
) -> Iterator[tuple[NDArray[np.intp], NDArray[np.intp], NDArray[np.float64]]]:
    """Yield (task index, seed position, weight) arrays of shape (chunk, tasks[, seeds]).

    Level 1 draws n_tasks tasks with replacement; level 2 takes counts[t] seed slots of each
    drawn task t as `within_task` says (slots >= counts[t] get weight 0).
    """
    task_rng, seed_rng = _streams(random_state)
    n_tasks = counts.size
    slots = np.arange(width)
    for start in range(0, n_resamples, chunk):
        size = min(chunk, n_resamples - start)
        tasks = task_rng.integers(0, n_tasks, size=(size, n_tasks))
        drawn_counts = counts[tasks][..., None]
        positions = within_task.positions(seed_rng, drawn_counts, width)
        weights = (slots < drawn_counts).astype(np.float64)
        yield tasks, positions, weights


def _jackknife(grid: CellGrid, statistic: Statistic) -> NDArray[np.float64]:
    """(tasks, metrics): the statistic with each task left out in turn."""
    n_tasks, width, n_metrics = grid.values.shape
    weights = grid.mask.astype(np.float64)
    slots = np.arange(n_tasks - 1)
    keep = slots + (slots >= np.arange(n_tasks)[:, None])  # row t: every task but t
    rows = max(1, _CHUNK_ELEMENTS // max(1, (n_tasks - 1) * width))
    out = np.empty((n_tasks, n_metrics))
    for start in range(0, n_tasks, rows):
        index = keep[start : start + rows]
        for m in range(n_metrics):
            out[start : start + rows, m] = statistic(grid.values[index, :, m], weights[index])
    return out


def _describe_seed(random_state: RandomState) -> str:
    if isinstance(random_state, np.random.Generator):
        return "caller's numpy Generator"
    return "unseeded" if random_state is None else f"seed {random_state}"


def _resolve(statistic: str | Statistic) -> NamedStatistic:
    if isinstance(statistic, str):
        return STATISTICS.get(statistic)
    return NamedStatistic(statistic, getattr(statistic, "__name__", "custom statistic"))


def _check_options(grid: CellGrid, n_resamples: int, confidence_level: float) -> None:
    if grid.n_tasks < 2:
        raise UsageError(
            f"a bootstrap interval over tasks needs at least 2 tasks with data, got {grid.n_tasks}",
            hint="run the benchmark on more tasks (or report the point estimate alone)",
        )
    if not isinstance(n_resamples, int | np.integer) or n_resamples < 2:
        raise UsageError(f"n_resamples must be an integer >= 2, got {n_resamples!r}")
    if not 0 < confidence_level < 1:
        raise UsageError(f"confidence_level must be between 0 and 1 (e.g. 0.95), got {confidence_level!r}")


def bootstrap_grid(
    grid: CellGrid,
    *,
    statistic: str | Statistic = "cell_mean",
    method: str = "bca",
    within_task: str = DEFAULT_WITHIN_TASK,
    n_resamples: int = N_RESAMPLES,
    confidence_level: float = CONFIDENCE_LEVEL,
    random_state: RandomState = 0,
) -> list[BootstrapResult]:
    """Two-level bootstrap of every metric of a CellGrid with one shared set of resamples.

    Sharing resamples across metrics (common random numbers) keeps their intervals coherent,
    e.g. pass@k stays monotone in k within every resample, and costs one index draw.
    """
    named = _resolve(statistic)
    ci_method = CI_METHODS.get(method)
    scheme = WITHIN_TASK.get(within_task)
    _check_options(grid, n_resamples, confidence_level)
    n_tasks, width, n_metrics = grid.values.shape
    chunk = max(1, _CHUNK_ELEMENTS // (n_tasks * width))
    draws = np.empty((n_resamples, n_metrics))
    done = 0
    for tasks, positions, weights in _resamples(grid.counts, width, n_resamples, chunk, scheme, random_state):
        for m in range(n_metrics):
            sample = grid.values[tasks[..., None], positions, m]
            draws[done : done + len(tasks), m] = named.function(sample, weights)
        done += len(tasks)
    mask = grid.mask.astype(np.float64)
    estimate = np.array([named.function(grid.values[:, :, m], mask) for m in range(n_metrics)])
    dist = _Distribution(estimate, draws, _jackknife(grid, named.function))
    low, high = ci_method.interval(dist, (1 - confidence_level) / 2)
    standard_error = draws.std(axis=0, ddof=1)
    estimator = (
        f"{named.description}; {confidence_level:.0%} {scheme.label}, "
        f"{ci_method.label}, {n_resamples} resamples, {_describe_seed(random_state)}"
    )
    return [
        BootstrapResult(
            estimate=float(estimate[m]),
            ci_low=float(low[m]),
            ci_high=float(high[m]),
            standard_error=float(standard_error[m]),
            method=method,
            confidence_level=confidence_level,
            n_resamples=n_resamples,
            n_tasks=grid.n_tasks,
            n_seeds=grid.n_seeds,
            n_obs=grid.n_obs,
            estimator=estimator,
        )
        for m in range(n_metrics)
    ]


def hierarchical_bootstrap(
    data: pd.DataFrame | ArrayLike,
    *,
    value: str = "value",
    task: str = "task_id",
    seed: str = "seed",
    statistic: str | Statistic = "cell_mean",
    method: str = "bca",
    within_task: str = DEFAULT_WITHIN_TASK,
    n_resamples: int = N_RESAMPLES,
    confidence_level: float = CONFIDENCE_LEVEL,
    random_state: RandomState = 0,
) -> BootstrapResult:
    """Seeded two-level bootstrap CI of a statistic of cell values indexed by (task, seed).

    Resamples tasks with replacement, then, inside each drawn task, as many of its seeds as
    it has, with replacement. Unbalanced data is fine: a missing cell is never drawn.

    Args:
        data: A long DataFrame with one row per task x seed (columns `task`, `seed`, `value`),
            or a 2-D array (tasks x seeds). NaN marks a missing cell in both.
        value: Column holding the cell values (DataFrame input).
        task: Column naming the task (DataFrame input).
        seed: Column naming the seed (DataFrame input).
        statistic: A name in STATISTICS ("cell_mean": grand mean of cells, the default;
            "task_mean": mean of per-task means) or a callable `(values, weights) -> array`
            reducing the last two axes (tasks, seeds) with 0/1 weights.
        method: A name in CI_METHODS: "bca" (default) or "percentile".
        within_task: A name in WITHIN_TASK: "resample" (default; seeds with replacement
            within each drawn task) or "keep" (each drawn task keeps its seeds: the cluster
            bootstrap, whose variance is not inflated by counting seed noise twice).
        n_resamples: Bootstrap resamples.
        confidence_level: Two-sided coverage, e.g. 0.95.
        random_state: Seed (int) or numpy Generator; the same seed gives the same interval.

    Returns:
        A BootstrapResult whose `estimator` text states the estimator.
    """
    if isinstance(data, pd.DataFrame):
        grid = grid_from_frame(data, task=task, seed=seed, values=[value])
    else:
        grid = grid_from_array(data)
    return bootstrap_grid(
        grid,
        statistic=statistic,
        method=method,
        within_task=within_task,
        n_resamples=n_resamples,
        confidence_level=confidence_level,
        random_state=random_state,
    )[0]
