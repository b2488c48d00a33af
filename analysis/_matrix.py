"""A harness matrix: one benchmark's tasks and seeds under several harnesses, side by side and paired.

The paper's claim that harness choice affects learnability is a claim about differences between harnesses
on the same tasks, so besides each harness's own numbers (the headline with its intervals, the five
capabilities, calls and tokens per task) every two harnesses are compared on their shared (task, seed)
cells (`compare_pair`: the same estimand and bootstrap as `forge-eval compare`), also at matched step
budgets: a harness that takes more model turns is otherwise credited for the extra turns. The first
harness is the baseline; each pair's difference is the later harness minus the earlier one.
"""

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from forge_eval.analysis._bootstrap import N_RESAMPLES, RANDOM_STATE
from forge_eval.analysis._budget import turn_quantiles
from forge_eval.analysis._compare import compare_pair
from forge_eval.analysis._metrics import HEADLINE_STATISTIC
from forge_eval.analysis._paired import paired_difference
from forge_eval.analysis._runs import RunTrials, load_run
from forge_eval.analysis._trials import read_run_logs
from forge_eval.analysis._usage import trial_usage, usage_cells, usage_per_task
from forge_eval.analysis.behavior import (
    Transcripts,
    compare_behavior,
    read_run_transcripts,
    summarize_behavior,
)

#: Usage columns whose paired differences a pair reports (per task, later harness minus earlier).
PAIRED_USAGE = ("calls", "total_tokens")


@dataclass(frozen=True)
class HarnessRun:
    """One harness's run of the matrix: its trials, transcripts and per-trial usage.

    Attributes:
        name: The harness.
        run: The run directory read back (results.json and the trials from its logs).
        transcripts: Its tool calls and rollouts (behavior).
        usage: Model calls and tokens per trial (`trial_usage`).
    """

    name: str
    run: RunTrials
    transcripts: Transcripts
    usage: pd.DataFrame


def load_harness_run(name: str, path: Path) -> HarnessRun:
    """Read one harness's run directory (its logs are read for trials, transcripts and usage)."""
    run = load_run(path)
    return HarnessRun(
        name, run, read_run_transcripts(path), trial_usage(read_run_logs(run.results.logs_path))
    )


def default_budgets(runs: Sequence[HarnessRun]) -> tuple[int, ...]:
    """Each harness's median model turns per trial (rounded up): every pair is then compared at the
    budget by which one of them typically finishes, where a difference in turns would otherwise hide."""
    medians = (turn_quantiles(r.run.trials)["median"] for r in runs)
    return tuple(sorted({max(1, math.ceil(m)) for m in medians if not math.isnan(m)}))


def harness_matrix(
    runs: Sequence[HarnessRun],
    *,
    budgets: tuple[int, ...] = (),
    root: Path | None = None,
    n_resamples: int = N_RESAMPLES,
    random_state: int = RANDOM_STATE,
) -> dict[str, Any]:
    """Per harness: headline, capabilities, calls and tokens per task; per pair: paired differences.

    Args:
        runs: The harnesses' runs, the baseline first.
        budgets: Step budgets (model turns) at which pairs are compared too; default `default_budgets`.
        root: The matrix run directory: each harness's `run_dir` is written relative to it.
        n_resamples: Bootstrap resamples per interval.
        random_state: Bootstrap seed.
    """
    given = bool(budgets)
    budgets = budgets or default_budgets(runs)
    options = {"n_resamples": n_resamples, "random_state": random_state}
    behavior = {r.name: summarize_behavior(r.transcripts, **options) for r in runs}
    return {
        "baseline": runs[0].name,
        "order": [r.name for r in runs],
        "runs": {r.name: _run_summary(r, behavior[r.name], root) for r in runs},
        "pairs": [
            _pair(a, b, budgets, n_resamples, random_state) for i, a in enumerate(runs) for b in runs[i + 1 :]
        ],
        "step_budgets": list(budgets),
        "step_budget_rule": "as given (--step-budget)"
        if given
        else "each harness's median model turns per trial, rounded up",
        "capability_titles": {k: d["title"] for k, d in behavior[runs[0].name]["definitions"].items()},
        "estimator": (
            "per harness, results.json's estimators; per pair, the later harness minus the earlier one on "
            "their shared (task, seed) cells, mean over tasks of each task's mean over seeds, 95% BCa "
            "bootstrap resampling tasks, each keeping its cells (forge-eval compare's); capabilities as "
            f"forge-eval analyze; no interval with fewer than 2 paired tasks; {n_resamples} resamples, "
            f"seed {random_state}"
        ),
    }


def _run_summary(run: HarnessRun, behavior: dict[str, Any], root: Path | None) -> dict[str, Any]:
    results = run.run.results
    path = run.run.path
    overall = behavior["groups"]["overall"]
    return {
        "run_dir": str(path.relative_to(root) if root is not None else path),
        "status": results.status,
        "n_tasks": int(run.run.trials["task_id"].nunique()),
        "metrics": {name: m.model_dump(mode="json") for name, m in results.metrics.items()},
        "capabilities": overall["capabilities"],
        "usage": usage_per_task(run.usage),
        "model_turns": turn_quantiles(run.run.trials),
    }


def _pair(a: HarnessRun, b: HarnessRun, budgets: tuple[int, ...], n: int, seed: int) -> dict[str, Any]:
    compared = compare_pair(a.run, b.run, budgets=budgets, n_resamples=n, random_state=seed)
    behavior = compare_behavior(b.transcripts, a.transcripts, n_resamples=n, random_state=seed)
    return {
        "a": a.name,
        "b": b.name,
        "direction": f"{b.name} minus {a.name}",
        **{k: v for k, v in compared.items() if k not in ("baseline", "run")},
        "capabilities": behavior["groups"].get("overall", {}).get("capabilities", {}),
        "usage": {c: _usage_difference(a.usage, b.usage, c, n, seed) for c in PAIRED_USAGE},
    }


def _usage_difference(a: pd.DataFrame, b: pd.DataFrame, column: str, n: int, seed: int) -> dict[str, Any]:
    """b - a of `column` per task on the shared (task, seed) cells; no interval below 2 paired tasks."""
    cells_a, cells_b = usage_cells(a, column), usage_cells(b, column)
    both = cells_a.merge(cells_b, on=["task_id", "seed"], suffixes=("_a", "_b"))
    if both.empty:
        return {"estimate": None, "ci_low": None, "ci_high": None, "n_paired": 0}
    per_task = both.assign(d=both["value_b"] - both["value_a"]).groupby("task_id")["d"].mean()
    out: dict[str, Any] = {"estimate": float(per_task.mean()), "ci_low": None, "ci_high": None}
    if len(per_task) >= 2:
        d = paired_difference(
            cells_a, cells_b, statistic=HEADLINE_STATISTIC, n_resamples=n, random_state=seed
        ).difference
        out.update(estimate=d.estimate, ci_low=d.ci_low, ci_high=d.ci_high)
    return {**out, "n_paired": len(both)}
