"""Read `DIR/trials.csv` (one row per task x seed x epoch) and summarise it per task and seed."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from forge_eval._errors import ForgeError

TRIALS_FILE = "trials.csv"
REQUIRED_COLUMNS = ("task_id", "seed", "epoch", "score", "passed", "error")
_BOOLEANS = {"true": True, "false": False, "1": True, "0": False}
_HINT = "trials.csv is written by `forge-eval run`; re-run the same command to regenerate it"


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


def load_trials(path: Path) -> pd.DataFrame:
    """Parse trials.csv with typed columns: seed/epoch int, score float (NaN if errored), passed bool.

    Everything is read as text first so task ids like "007" keep their zeros.
    """
    try:
        frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as e:
        raise ForgeError(f"{path} is not a readable CSV file: {e}", _HINT) from None
    missing = [c for c in REQUIRED_COLUMNS if c not in frame.columns]
    if missing:
        raise ForgeError(f"{path} lacks the column(s) {', '.join(missing)}", _HINT)
    problems: list[str] = []
    for column in ("seed", "epoch"):
        parsed = pd.to_numeric(frame[column], errors="coerce")
        bad = parsed.isna() | (parsed != parsed.round())
        if bad.any():
            problems.append(_bad_rows(frame, column, bad, "an integer"))
        frame[column] = parsed.fillna(0).astype(int)
    # Empty (how pandas writes NaN) or a literal "nan" both mean "no score".
    no_score = frame["score"].str.strip().str.lower().isin(["", "nan"])
    score = pd.to_numeric(frame["score"].where(~no_score, None), errors="coerce")
    bad_score = score.isna() & ~no_score
    if bad_score.any():
        problems.append(_bad_rows(frame, "score", bad_score, "a number or empty"))
    frame["score"] = score.astype(float)
    passed = frame["passed"].str.strip().str.lower().map(_BOOLEANS)
    if passed.isna().any():
        problems.append(_bad_rows(frame, "passed", passed.isna(), "true or false"))
    frame["passed"] = passed.fillna(False).astype(bool)
    if problems:
        raise ForgeError(f"{path} is invalid: {'; '.join(problems)}", _HINT)
    return frame


def _bad_rows(frame: pd.DataFrame, column: str, bad: pd.Series, expected: str) -> str:
    # Rows as a spreadsheet numbers them (header = row 1); not file lines, as quoted error
    # messages may span several lines.
    rows = [int(i) + 2 for i in frame.index[bad][:3]]
    example = frame.loc[bad, column].iloc[0]
    return f"'{column}' must be {expected} (row(s) {rows}: {example!r})"


def summarise(frame: pd.DataFrame, seeds: tuple[int, ...]) -> TaskOutcomes:
    """Group trials into a task x seed grid; seeds seen in the file but not in `seeds` are appended."""
    all_seeds = tuple(seeds) + tuple(sorted(set(frame["seed"]) - set(seeds)))
    metadata_columns = tuple(c for c in frame.columns if c not in REQUIRED_COLUMNS)
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
                metadata={c: _first_nonempty(group[c]) for c in metadata_columns},
            )
        )
    return TaskOutcomes(all_seeds, tuple(rows), metadata_columns)


def _first_nonempty(values: pd.Series) -> str:
    present = values[values.str.strip() != ""]
    return str(present.iloc[0]) if len(present) else ""
