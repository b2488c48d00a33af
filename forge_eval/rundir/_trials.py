"""trials.csv: its columns, its writer and its one reader."""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

from forge_eval._errors import ForgeError
from forge_eval._files import write_text

#: The columns of trials.csv, in this order; sample-metadata columns (difficulty, category, ...) follow.
#: `model_turns` counts the agent's own model calls (step budgets); files written before it existed lack it.
TRIAL_COLUMNS = ("task_id", "seed", "epoch", "score", "passed", "error", "model_turns")
#: The trials table read from the logs also names each trial's log file (in memory only, not in the file).
LOG_FILE = "log_file"
#: Columns every trials.csv has (`model_turns` may be missing from older files).
REQUIRED_COLUMNS = TRIAL_COLUMNS[:6]

_BOOLEANS = {"true": True, "false": False, "1": True, "0": False}
_HINT = "trials.csv is written by `forge-eval run`; re-run the same command to regenerate it"


def write_trials(path: str | os.PathLike[str], table: pd.DataFrame) -> Path:
    """Write the trials table's TRIAL_COLUMNS, then any metadata columns, to `path` (atomically).

    Columns of the in-memory table that are not part of the file (e.g. the log file name) are left out.
    """
    columns = [c for c in TRIAL_COLUMNS if c in table.columns] + list(metadata_columns(table))
    return write_text(path, table[columns].to_csv(index=False))


def metadata_columns(frame: pd.DataFrame) -> tuple[str, ...]:
    """The columns of a trials table that are sample metadata: neither TRIAL_COLUMNS nor LOG_FILE."""
    return tuple(c for c in frame.columns if c not in TRIAL_COLUMNS and c != LOG_FILE)


def read_trials(path: str | os.PathLike[str]) -> pd.DataFrame:
    """Parse trials.csv with typed columns: seed/epoch int, score float (NaN if errored), passed bool,
    model_turns nullable int; metadata columns stay text.

    Everything is read as text first so task ids like "007" keep their zeros.

    Raises:
        ForgeError: the file is not CSV, lacks a required column or holds a malformed value (every
            problem is listed, with its rows).
    """
    path = Path(path)
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
    if "model_turns" in frame.columns:
        unknown = frame["model_turns"].str.strip() == ""
        turns = pd.to_numeric(frame["model_turns"].where(~unknown, None), errors="coerce")
        bad_turns = (turns.isna() & ~unknown) | (turns.notna() & ((turns < 0) | (turns != turns.round())))
        if bad_turns.any():
            problems.append(_bad_rows(frame, "model_turns", bad_turns, "a count or empty"))
        else:
            frame["model_turns"] = turns.astype("Int64")
    if problems:
        raise ForgeError(f"{path} is invalid: {'; '.join(problems)}", _HINT)
    return frame


def _bad_rows(frame: pd.DataFrame, column: str, bad: pd.Series, expected: str) -> str:
    # Rows as a spreadsheet numbers them (header = row 1); not file lines, as quoted error
    # messages may span several lines.
    rows = [int(i) + 2 for i in frame.index[bad][:3]]
    example = frame.loc[bad, column].iloc[0]
    return f"'{column}' must be {expected} (row(s) {rows}: {example!r})"
