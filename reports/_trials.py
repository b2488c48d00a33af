"""Summarise a trials table (`forge_eval.rundir.read_trials`) per task and seed, for the report."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from forge_eval.rundir import metadata_columns


@dataclass(frozen=True)
class Cell:
    """The trials of one task under one seed."""

    n_trials: int
    n_passed: int
    n_errored: int

    @property
    def pass_fraction(self) -> float | None:
        return self.n_passed / self.n_trials if self.n_trials else None


@dataclass(frozen=True)
class TaskRow:
    """One task's outcomes: a cell per seed (None = no trial recorded), scores and errors."""

    task_id: str
    cells: tuple[Cell | None, ...]
    mean_score: float | None
    n_trials: int
    n_passed: int
    n_errored: int
    errors: tuple[str, ...]
    metadata: dict[str, str]

    @property
    def pass_fraction(self) -> float | None:
        return self.n_passed / self.n_trials if self.n_trials else None


@dataclass(frozen=True)
class TaskOutcomes:
    """Per-task outcomes over the run's seeds, tasks in their order of first appearance."""

    seeds: tuple[int, ...]
    tasks: tuple[TaskRow, ...]
    metadata_columns: tuple[str, ...]


def summarise(frame: pd.DataFrame, seeds: tuple[int, ...]) -> TaskOutcomes:
    """Group trials into a task x seed grid; seeds seen in the file but not in `seeds` are appended."""
    all_seeds = tuple(seeds) + tuple(sorted(set(frame["seed"]) - set(seeds)))
    metadata = metadata_columns(frame)
    errored = frame["error"].str.strip() != ""
    frame = frame.assign(errored=errored)
    cells = {
        key: Cell(len(group), int(group["passed"].sum()), int(group["errored"].sum()))
        for key, group in frame.groupby(["task_id", "seed"], sort=False)
    }
    rows = []
    for task_id, group in frame.groupby("task_id", sort=False):
        scores = group["score"].dropna()
        rows.append(
            TaskRow(
                task_id=str(task_id),
                cells=tuple(cells.get((task_id, seed)) for seed in all_seeds),
                mean_score=float(scores.mean()) if len(scores) else None,
                n_trials=len(group),
                n_passed=int(group["passed"].sum()),
                n_errored=int(group["errored"].sum()),
                errors=tuple(dict.fromkeys(group.loc[group["errored"], "error"].str.strip())),
                metadata={c: _first_nonempty(group[c]) for c in metadata},
            )
        )
    return TaskOutcomes(all_seeds, tuple(rows), metadata)


def _first_nonempty(values: pd.Series) -> str:
    present = values[values.str.strip() != ""]
    return str(present.iloc[0]) if len(present) else ""
