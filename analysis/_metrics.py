"""Headline metrics of a run (what results.json holds), each with a two-level bootstrap CI.

Every metric is first reduced to one value per (task, seed) cell from that cell's n trials
(epochs) and c passes, then averaged over each task's seeds and over tasks (the mean over tasks;
with balanced data the same as the mean over cells), with the interval from a seeded bootstrap over
tasks and seeds. Errored trials (NaN score) stay in n and count as failures (score 0): an
attempt that crashed is a failed attempt. Trials that were never run (an interrupted run) are
simply absent, so a cell with fewer than k trials has no pass@k / pass^k and is left out of
those two metrics only.
"""

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from forge_eval._errors import UsageError
from forge_eval._files import json_safe
from forge_eval.analysis._bootstrap import (
    CONFIDENCE_LEVEL,
    DEFAULT_WITHIN_TASK,
    N_RESAMPLES,
    STATISTICS,
    BootstrapResult,
    RandomState,
    bootstrap_grid,
)
from forge_eval.analysis._cells import CellGrid, grid_from_frame
from forge_eval.analysis._passk import pass_at_k, pass_hat_k

_REQUIRED = ("task_id", "seed", "epoch", "score", "passed")
#: The estimand is the mean over tasks (README): each task weighs the same whatever number of its seeds
#: finished, so an interrupted or unbalanced run does not tilt the headline toward fuller tasks.
HEADLINE_STATISTIC = "task_mean"


@dataclass(frozen=True)
class CellMetric:
    """A metric computed per (task, seed) cell from its trial counts.

    `value` maps the cell table (columns n, c, score_sum) to one value per cell, NaN where the
    metric is undefined for that cell.
    """

    value: Callable[[pd.DataFrame], NDArray[np.float64]]
    description: str


def _pass_metric(k: int, function: Callable[..., NDArray[np.float64]]) -> Callable[[pd.DataFrame], NDArray]:
    def value(cells: pd.DataFrame) -> NDArray[np.float64]:
        n, c = cells["n"].to_numpy(), cells["c"].to_numpy()
        out = np.full(n.shape, np.nan)
        defined = n >= k
        out[defined] = function(n[defined], c[defined], k)
        return out

    return value


def cell_metrics(epochs: int, graded: bool, fractional: bool = False) -> dict[str, CellMetric]:
    """The metrics of a run with `epochs` trials per cell, in results.json order.

    With `fractional` (a benchmark whose own success rate is the mean of its possibly fractional task
    results, e.g. OSWorld), `success_rate` is that mean and the all-or-nothing rate is
    `full_success_rate`.
    """
    passes = CellMetric(
        lambda cells: (cells["c"] / cells["n"]).to_numpy(dtype=float),
        "pass@1: per task x seed, the share of passing epochs",
    )
    if fractional:
        metrics = {
            "success_rate": CellMetric(
                lambda cells: (cells["score_sum"] / cells["n"]).to_numpy(dtype=float),
                "the benchmark's success rate: per task x seed, the mean of the (possibly fractional) "
                "scores over epochs",
            ),
            "full_success_rate": passes,
        }
    else:
        metrics = {"success_rate": passes}
    for k in range(2, epochs + 1):
        metrics[f"pass@{k}"] = CellMetric(
            _pass_metric(k, pass_at_k), f"unbiased pass@{k} = 1 - C(n-c,{k})/C(n,{k}) per task x seed"
        )
        metrics[f"pass^{k}"] = CellMetric(
            _pass_metric(k, pass_hat_k), f"unbiased pass^{k} = C(c,{k})/C(n,{k}) per task x seed"
        )
    if graded:
        metrics["mean_score"] = CellMetric(
            lambda cells: (cells["score_sum"] / cells["n"]).to_numpy(dtype=float),
            "per task x seed, the mean score over epochs",
        )
    return metrics


def _check_trials(trials: pd.DataFrame, epochs: int) -> None:
    missing = [c for c in _REQUIRED if c not in trials.columns]
    if missing:
        raise UsageError(f"trials table lacks column(s) {missing}; it has {list(trials.columns)}")
    if not isinstance(epochs, int | np.integer) or epochs < 1:
        raise UsageError(f"epochs must be an integer >= 1, got {epochs!r}")
    if trials.empty:
        raise UsageError("trials table is empty: no trial was run or read from the logs")
    epoch = trials["epoch"]
    outside = trials[(epoch < 1) | (epoch > epochs)]
    if not outside.empty:
        row = outside.iloc[0]
        raise UsageError(
            f"trial ({row['task_id']}, seed {row['seed']}) has epoch {row['epoch']}, outside 1..{epochs}",
            hint="pass the run's --epochs; epochs are numbered from 1",
        )
    infinite = np.isinf(pd.to_numeric(trials["score"], errors="coerce").to_numpy(dtype=np.float64))
    if infinite.any():
        row = trials[infinite].iloc[0]
        raise UsageError(
            f"trial ({row['task_id']}, seed {row['seed']}, epoch {row['epoch']}) has score {row['score']}; "
            "scores must be finite",
            hint="fix the scorer; an errored trial has score NaN and counts as a failure",
        )
    repeated = trials.duplicated(subset=["task_id", "seed", "epoch"])
    if repeated.any():
        row = trials[repeated].iloc[0]
        raise UsageError(
            f"trials table has more than one row for task {row['task_id']}, seed {row['seed']}, "
            f"epoch {row['epoch']}",
            hint="keep one row per task x seed x epoch (the newest retry)",
        )


def trial_cells(trials: pd.DataFrame, *, epochs: int, graded: bool, fractional: bool = False) -> pd.DataFrame:
    """Reduce a trials table to one row per (task_id, seed) with every metric's cell value.

    Returns:
        Columns task_id, seed, n (trials), c (passes), score_sum, then one column per metric
        name of `cell_metrics` (NaN where a metric is undefined for the cell).
    """
    _check_trials(trials, epochs)
    scores = pd.to_numeric(trials["score"], errors="coerce")
    passed = trials["passed"].fillna(False).astype(bool) & scores.notna()
    frame = pd.DataFrame(
        {"task_id": trials["task_id"], "seed": trials["seed"], "c": passed.astype(int), "s": scores.fillna(0)}
    )
    grouped = frame.groupby(["task_id", "seed"], sort=True)
    sums = grouped[["c", "s"]].sum()
    cells = sums.assign(n=grouped.size()).rename(columns={"s": "score_sum"})
    cells = cells[["n", "c", "score_sum"]].reset_index()
    for name, metric in cell_metrics(epochs, graded, fractional).items():
        cells[name] = metric.value(cells)
    return cells


@dataclass(frozen=True)
class MetricSummary:
    """One headline metric: estimate, 95% interval over tasks and seeds, per-seed estimates."""

    estimate: float
    ci_low: float
    ci_high: float
    standard_error: float
    confidence_level: float
    per_seed: list[dict[str, float]]
    n_tasks: int
    n_seeds: int
    n_trials: int
    estimator: str

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready values (NaN becomes None: JSON has no NaN)."""
        return json_safe(asdict(self))


def _per_seed(cells: pd.DataFrame, names: list[str]) -> dict[str, list[dict[str, float]]]:
    """Each metric over tasks within each seed (mean of that seed's cells)."""
    means = cells.groupby("seed", sort=True)[names].mean()
    return {
        name: [{"seed": int(seed), "estimate": float(value)} for seed, value in means[name].items()]
        for name in names
    }


def _without_interval(grid: CellGrid, confidence_level: float) -> list[BootstrapResult]:
    """Point estimates only: with one task there is nothing to resample tasks from.

    A run of a single task (e.g. a --quick subset) still gets its numbers, with NaN bounds
    (null in JSON) and an estimator text that says why.
    """
    weights = grid.mask.astype(float)
    return [
        BootstrapResult(
            estimate=float(STATISTICS.get(HEADLINE_STATISTIC).function(grid.values[:, :, m], weights)),
            ci_low=math.nan,
            ci_high=math.nan,
            standard_error=math.nan,
            method="none",
            confidence_level=confidence_level,
            n_resamples=0,
            n_tasks=grid.n_tasks,
            n_seeds=grid.n_seeds,
            n_obs=grid.n_obs,
            estimator="mean over tasks of per-task means over seeds; no interval: a bootstrap over tasks "
            "needs at least 2 tasks",
        )
        for m in range(grid.values.shape[2])
    ]


def summarize_trials(
    trials: pd.DataFrame,
    *,
    epochs: int,
    graded: bool,
    fractional: bool = False,
    n_resamples: int = N_RESAMPLES,
    method: str = "bca",
    within_task: str = DEFAULT_WITHIN_TASK,
    confidence_level: float = CONFIDENCE_LEVEL,
    random_state: RandomState = 0,
) -> dict[str, MetricSummary]:
    """Headline metrics of a run, one MetricSummary per metric name.

    Metrics: `success_rate` (pass@1), `pass@k` and `pass^k` for 2 <= k <= epochs, and
    `mean_score` when `graded`. All metrics share one set of bootstrap resamples, so their
    intervals are coherent (e.g. pass@2 <= pass@3 within every resample).

    Args:
        trials: One row per task x seed x epoch with columns task_id, seed, epoch (1-based),
            score (NaN = errored) and passed.
        epochs: Trials per task per seed in the run (the largest k).
        graded: Whether scores are graded (adds `mean_score`).
        fractional: `success_rate` is the mean score, the all-or-nothing rate `full_success_rate`.
        n_resamples: Bootstrap resamples.
        method: "bca" or "percentile".
        within_task: "resample" (two-level bootstrap) or "keep" (tasks only); see
            `hierarchical_bootstrap`.
        confidence_level: Two-sided coverage of the intervals.
        random_state: Bootstrap seed; the same seed reproduces the same intervals.
    """
    cells = trial_cells(trials, epochs=epochs, graded=graded, fractional=fractional)
    metrics = cell_metrics(epochs, graded, fractional)
    # Metrics defined on the same cells are bootstrapped together; a metric that is undefined
    # on some cells (pass@k of a cell with fewer than k trials) gets its own grid.
    groups: dict[bytes, list[str]] = {}
    for name in metrics:
        groups.setdefault(cells[name].notna().to_numpy().tobytes(), []).append(name)
    summaries: dict[str, MetricSummary] = {}
    for names in groups.values():
        present = cells.dropna(subset=names[:1])
        grid = grid_from_frame(present, task="task_id", seed="seed", values=names)
        if grid.n_tasks < 2:
            results = _without_interval(grid, confidence_level)
        else:
            results = bootstrap_grid(
                grid,
                statistic=HEADLINE_STATISTIC,
                method=method,
                within_task=within_task,
                n_resamples=n_resamples,
                confidence_level=confidence_level,
                random_state=random_state,
            )
        per_seed = _per_seed(present, names)
        for name, result in zip(names, results, strict=True):
            summaries[name] = MetricSummary(
                estimate=result.estimate,
                ci_low=result.ci_low,
                ci_high=result.ci_high,
                standard_error=result.standard_error,
                confidence_level=confidence_level,
                per_seed=per_seed[name],
                n_tasks=result.n_tasks,
                n_seeds=result.n_seeds,
                n_trials=int(present["n"].sum()),
                estimator=f"{metrics[name].description}, errored trials fail; {result.estimator}",
            )
    return {name: summaries[name] for name in metrics}
