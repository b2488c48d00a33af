"""`RunDir`: the one place that names the files of a run directory."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar


@dataclass(frozen=True)
class RunDir:
    """A run directory (`forge-eval run --out DIR`) and the name of every file in it.

    Written by `forge-eval run`: `results.json` (the contract: `RunResults`), `trials.csv` (one row per
    task x seed x epoch), `run.json` (the run's identity and seeds, for resuming), `report.html`, `logs/`
    (Inspect's eval logs, the single source of truth) and `records/` (harness programs' proxy records).
    Added later by other commands: `behavior.json` (`forge-eval analyze`), `budgets.json`
    (`--step-budget`). `forge-eval compare` writes `compare.json` and `compare.html` into its own
    directory, named here too. The class attributes are the bare names (for messages).
    """

    RESULTS: ClassVar[str] = "results.json"
    TRIALS: ClassVar[str] = "trials.csv"
    RUN_MARKER: ClassVar[str] = "run.json"
    REPORT: ClassVar[str] = "report.html"
    BEHAVIOR: ClassVar[str] = "behavior.json"
    BUDGETS: ClassVar[str] = "budgets.json"
    LOGS: ClassVar[str] = "logs"
    RECORDS: ClassVar[str] = "records"
    COMPARE: ClassVar[str] = "compare.json"
    COMPARE_REPORT: ClassVar[str] = "compare.html"

    path: Path

    def __post_init__(self) -> None:
        object.__setattr__(self, "path", Path(self.path))  # accept a str or any path-like

    @property
    def results(self) -> Path:
        return self.path / self.RESULTS

    @property
    def trials(self) -> Path:
        return self.path / self.TRIALS

    @property
    def run_marker(self) -> Path:
        """run.json: what makes an invocation the same run, and the seeds finished so far."""
        return self.path / self.RUN_MARKER

    @property
    def report(self) -> Path:
        return self.path / self.REPORT

    @property
    def behavior(self) -> Path:
        return self.path / self.BEHAVIOR

    @property
    def budgets(self) -> Path:
        return self.path / self.BUDGETS

    @property
    def logs(self) -> Path:
        return self.path / self.LOGS

    @property
    def records(self) -> Path:
        return self.path / self.RECORDS

    @property
    def compare(self) -> Path:
        """compare.json, in the directory `forge-eval compare --out` writes."""
        return self.path / self.COMPARE

    @property
    def compare_report(self) -> Path:
        """compare.html, next to compare.json."""
        return self.path / self.COMPARE_REPORT

    def __fspath__(self) -> str:
        return os.fspath(self.path)

    def __str__(self) -> str:
        return str(self.path)
