"""A finished run read back from its directory: the protocol from results.json, the trials from the logs.

The logs are the single source of truth (trials.csv is a convenience copy), so runs written by older
versions still give every column, model turns included.
"""

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from forge_eval._errors import UsageError
from forge_eval.analysis._trials import read_run_logs, trials_table
from forge_eval.rundir import RunResults, load_results


@dataclass(frozen=True)
class RunTrials:
    """A run directory's protocol (results.json) and its trials table (read from the logs)."""

    path: Path
    results: RunResults
    trials: pd.DataFrame

    @property
    def graded(self) -> bool:
        return "mean_score" in self.results.metrics

    @property
    def fractional(self) -> bool:
        """Whether `success_rate` is the mean score (the all-or-nothing rate is `full_success_rate`)."""
        return "full_success_rate" in self.results.metrics

    def describe(self) -> dict[str, Any]:
        r = self.results
        return {
            "path": str(self.path),
            "benchmark": r.benchmark,
            "model": r.model,
            "harness": r.harness,
            "seeds": list(r.seeds),
            "epochs": r.epochs,
            "status": r.status,
            "comparable": r.comparable,
            "n_tasks": int(self.trials["task_id"].nunique()),
        }


def load_run(path: Path) -> RunTrials:
    """Read one run directory; a clear error when it is not one or has no finished trial."""
    if not path.is_dir():
        raise UsageError(
            f"{path} is not a run directory",
            hint="pass directories written by `forge-eval run ... --out DIR`",
        )
    results = load_results(path).at(path)
    logs = read_run_logs(results.logs_path)
    if not logs:
        raise UsageError(f"{path} has no Inspect logs under {results.logs_path}", hint="finish the run first")
    trials = trials_table(logs, results.threshold if results.threshold is not None else 1.0)
    if trials.empty:
        raise UsageError(f"{path} has no finished trial to compare")
    return RunTrials(path, results, trials)
