"""Paired difference of two runs on the same tasks and seeds (e.g. two credit variants).

Pairing removes the task difficulty shared by both runs from the comparison: the bootstrap
resamples the per-cell differences b - a, so each drawn task (and seed within it) is drawn
for both runs at once.
"""

from dataclasses import dataclass, replace

import pandas as pd

from forge_eval._errors import UsageError
from forge_eval.analysis._bootstrap import (
    CONFIDENCE_LEVEL,
    N_RESAMPLES,
    BootstrapResult,
    RandomState,
    Statistic,
    hierarchical_bootstrap,
)


@dataclass(frozen=True)
class PairedDifference:
    """CI of mean(b - a) over paired (task, seed) cells, and what could not be paired.

    Attributes:
        difference: Bootstrap result of the per-cell difference b - a.
        n_paired: Cells present in both runs (the ones used).
        n_unpaired_a: Cells of run a without a partner in run b (dropped).
        n_unpaired_b: Cells of run b without a partner in run a (dropped).
    """

    difference: BootstrapResult
    n_paired: int
    n_unpaired_a: int
    n_unpaired_b: int

    @property
    def n_dropped(self) -> int:
        return self.n_unpaired_a + self.n_unpaired_b


def _cells(run: pd.DataFrame, label: str, task: str, seed: str, value: str) -> pd.DataFrame:
    missing = [c for c in (task, seed, value) if c not in run.columns]
    if missing:
        raise UsageError(f"run {label} lacks column(s) {missing}; it has {list(run.columns)}")
    cells = run[[task, seed, value]].dropna(subset=[value])
    if cells.duplicated(subset=[task, seed]).any():
        raise UsageError(
            f"run {label} has more than one row per ({task}, {seed})",
            hint="reduce trials to one value per task x seed first (trial_cells does this)",
        )
    return cells


def paired_difference(
    run_a: pd.DataFrame,
    run_b: pd.DataFrame,
    *,
    value: str = "value",
    task: str = "task_id",
    seed: str = "seed",
    statistic: str | Statistic = "cell_mean",
    method: str = "bca",
    within_task: str = "keep",
    n_resamples: int = N_RESAMPLES,
    confidence_level: float = CONFIDENCE_LEVEL,
    random_state: RandomState = 0,
) -> PairedDifference:
    """Two-level bootstrap CI of the mean paired difference b - a.

    Cells are aligned on (task, seed); a cell present in only one run has no partner and is
    dropped (and counted). Tasks, then seeds within task, are resampled jointly for both runs.

    Args:
        run_a: Baseline cells, one row per task x seed (e.g. from `trial_cells`).
        run_b: Compared cells, same columns; the difference is b - a.
        value: Column holding the cell value (e.g. "success_rate").
        task: Task column.
        seed: Seed column.
        statistic: As in `hierarchical_bootstrap`.
        method: "bca" or "percentile".
        within_task: "resample" or "keep", as in `hierarchical_bootstrap`. Default "keep": pairing
            removes the shared task effect, and resampling seeds again inside each task then counts
            the seed noise twice (measured coverage of a nominal 95% interval: 0.98 two-level vs
            0.94 keep, tests/analysis/test_stats_coverage.py), which would cost the ablations power.
        n_resamples: Bootstrap resamples.
        confidence_level: Two-sided coverage.
        random_state: Bootstrap seed.
    """
    a = _cells(run_a, "a", task, seed, value)
    b = _cells(run_b, "b", task, seed, value)
    merged = a.merge(b, on=[task, seed], how="outer", suffixes=("_a", "_b"), indicator=True)
    paired = merged[merged["_merge"] == "both"]
    if paired.empty:
        shared_tasks = set(a[task]) & set(b[task])
        why = "share no tasks" if not shared_tasks else f"share {len(shared_tasks)} task(s) but no seeds"
        raise UsageError(
            f"runs a and b {why}, so there is nothing to pair",
            hint="compare runs of the same benchmark tasks with the same --seeds",
        )
    diff = pd.DataFrame(
        {task: paired[task], seed: paired[seed], "difference": paired[f"{value}_b"] - paired[f"{value}_a"]}
    )
    result = hierarchical_bootstrap(
        diff,
        value="difference",
        task=task,
        seed=seed,
        statistic=statistic,
        method=method,
        within_task=within_task,
        n_resamples=n_resamples,
        confidence_level=confidence_level,
        random_state=random_state,
    )
    return PairedDifference(
        difference=replace(result, estimator=f"paired difference b - a per task x seed; {result.estimator}"),
        n_paired=len(paired),
        n_unpaired_a=int((merged["_merge"] == "left_only").sum()),
        n_unpaired_b=int((merged["_merge"] == "right_only").sum()),
    )
