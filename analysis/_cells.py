"""Cell values indexed by (task, seed), packed for vectorized two-level resampling.

Each task's present seeds are packed to the left of a (tasks, max_seeds) array, so that
"draw m_t seeds with replacement within task t" becomes an index draw below `counts[t]`
and a missing cell (unbalanced data) simply never gets drawn.
"""

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from forge_eval._errors import UsageError


@dataclass(frozen=True)
class CellGrid:
    """Cells packed per task.

    Attributes:
        values: (tasks, max_seeds, metrics); entries at positions >= counts[t] are 0 and unused.
        counts: Seeds present per task (every task has at least one).
        n_seeds: Distinct seeds over all present cells.
    """

    values: NDArray[np.float64]
    counts: NDArray[np.int64]
    n_seeds: int

    @property
    def n_tasks(self) -> int:
        return int(self.counts.size)

    @property
    def n_obs(self) -> int:
        return int(self.counts.sum())

    @property
    def mask(self) -> NDArray[np.bool_]:
        """(tasks, max_seeds): True where a cell is present."""
        return np.arange(self.values.shape[1]) < self.counts[:, None]


def _check_finite(values: NDArray[np.float64], what: str) -> None:
    """NaN marks a missing cell; an infinite value is an error upstream, never a cell to average."""
    infinite = np.isinf(values)
    if infinite.any():
        raise UsageError(
            f"cell table {what} holds {int(infinite.sum())} infinite value(s); cell values must be finite",
            hint="fix the score or metric that produced them (NaN marks a missing cell)",
        )


def grid_from_frame(frame: pd.DataFrame, *, task: str, seed: str, values: Sequence[str]) -> CellGrid:
    """Pack a long table (one row per task x seed) into a CellGrid.

    A row whose value is NaN counts as a missing cell, like an absent row.
    """
    missing = [c for c in (task, seed, *values) if c not in frame.columns]
    if missing:
        raise UsageError(
            f"cell table lacks column(s) {missing}; it has {list(frame.columns)}",
            hint="pass task=, seed= and value= to name the columns",
        )
    cells = frame[[task, seed, *values]]
    numeric = cells[list(values)].apply(pd.to_numeric, errors="coerce")
    if numeric.isna().to_numpy().sum() > cells[list(values)].isna().to_numpy().sum():
        raise UsageError(f"cell table column(s) {list(values)} must be numeric")
    _check_finite(numeric.to_numpy(dtype=np.float64), f"column(s) {list(values)}")
    cells = cells.assign(**{v: numeric[v] for v in values}).dropna(subset=list(values))
    duplicated = cells.duplicated(subset=[task, seed])
    if duplicated.any():
        first = cells.loc[duplicated, [task, seed]].iloc[0].tolist()
        raise UsageError(
            f"cell table has more than one row for ({task}, {seed}) = {tuple(first)}",
            hint="aggregate epochs into one value per task x seed first (summarize_trials does this)",
        )
    task_codes, _ = pd.factorize(cells[task], sort=True)
    position = cells.groupby(task_codes, sort=False).cumcount().to_numpy()
    counts = np.bincount(task_codes, minlength=task_codes.max() + 1 if len(task_codes) else 0)
    grid = np.zeros((counts.size, int(counts.max(initial=0)), len(values)))
    grid[task_codes, position] = cells[list(values)].to_numpy(dtype=np.float64)
    return CellGrid(grid, counts.astype(np.int64), int(cells[seed].nunique()))


def grid_from_array(array: ArrayLike) -> CellGrid:
    """Pack a (tasks, seeds) array, NaN = missing cell, into a one-metric CellGrid."""
    matrix = np.asarray(array, dtype=np.float64)
    if matrix.ndim != 2:
        raise UsageError(f"cell array must be 2-D (tasks x seeds), got shape {matrix.shape}")
    _check_finite(matrix, "cell array")
    present = ~np.isnan(matrix)
    observed_tasks = present.any(axis=1)
    matrix, present = matrix[observed_tasks], present[observed_tasks]
    order = np.argsort(~present, axis=1, kind="stable")
    packed = np.where(np.take_along_axis(present, order, axis=1), np.take_along_axis(matrix, order, 1), 0.0)
    n_seeds = int(present.any(axis=0).sum())
    return CellGrid(packed[:, :, None], present.sum(axis=1).astype(np.int64), n_seeds)
