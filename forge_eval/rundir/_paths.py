"""`RunDir`: the one place that names the files of a run directory."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, overload


class _Entry:
    """A file of the run directory: `RunDir(p).results` is `p / "results.json"` (on the class: this entry)."""

    def __init__(self, name: str, doc: str | None = None) -> None:
        self.name = name
        self.__doc__ = doc or f"{name} in the run directory."

    @overload
    def __get__(self, run: None, owner: type) -> _Entry: ...
    @overload
    def __get__(self, run: RunDir, owner: type) -> Path: ...
    def __get__(self, run: RunDir | None, owner: type) -> Path | _Entry:
        return self if run is None else run.path / self.name


@dataclass(frozen=True)
class RunDir:
    """A run directory (`forge-eval run --out DIR`) and the name of every file in it.

    Written by `forge-eval run`: `results.json` (the contract: `RunResults`), `trials.csv` (one row per
    task x seed x epoch), `run.json` (the run's identity and seeds, for resuming), `report.html`, `logs/`
    (Inspect's eval logs, the single source of truth; a run on a cluster keeps each shard's in
    `logs/shards/<key>/`), `records/` (harness programs' proxy records) and, for a run on a cluster,
    `shards.json` (each shard's node and times). A harness matrix (`--harness a,b`) keeps one such run
    directory per harness in `harnesses/<name>/`; its own results.json is the first harness's plus a
    `harnesses` section.
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
    SHARDS: ClassVar[str] = "shards.json"
    COMPARE: ClassVar[str] = "compare.json"
    COMPARE_REPORT: ClassVar[str] = "compare.html"
    HARNESSES: ClassVar[str] = "harnesses"

    path: Path

    def __post_init__(self) -> None:
        object.__setattr__(self, "path", Path(self.path))  # accept a str or any path-like

    results = _Entry(RESULTS)
    trials = _Entry(TRIALS)
    run_marker = _Entry(RUN_MARKER, "run.json: what makes a command the same run, and the seeds done so far.")
    report = _Entry(REPORT)
    behavior = _Entry(BEHAVIOR)
    budgets = _Entry(BUDGETS)
    logs = _Entry(LOGS)
    records = _Entry(RECORDS)
    shards = _Entry(SHARDS, "shards.json: per shard of a run on a cluster, its node, times and outcome.")
    compare = _Entry(COMPARE, "compare.json, in the directory `forge-eval compare --out` writes.")
    compare_report = _Entry(COMPARE_REPORT, "compare.html, next to compare.json.")
    harnesses = _Entry(HARNESSES, "harnesses/: a harness matrix's run directory per harness, by name.")

    def read_json(self, name: str) -> Any:
        """The JSON file `name` of this directory (e.g. `RunDir.BUDGETS`), parsed; None when the run has
        none (behavior.json and budgets.json come from later commands; a report section then stays out)."""
        path = self.path / name
        return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None

    def __fspath__(self) -> str:
        return os.fspath(self.path)

    def __str__(self) -> str:
        return str(self.path)
