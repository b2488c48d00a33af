"""Step budgets: every headline metric recomputed as if each trajectory had been cut at N model turns.

Two harnesses (or models) that spend different numbers of model calls are compared fairly only at a matched
budget. A trial whose agent made at most N model calls finished within N and keeps its outcome; one that
needed more had not finished by turn N, so at budget N it fails (score 0). Counting uses the agent's own
model calls (`is_agent_turn`: judges and graders excluded; a bridged harness's internal calls included).
"""

import math
from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from forge_eval._errors import UsageError
from forge_eval.analysis._bootstrap import N_RESAMPLES, RANDOM_STATE, RandomState
from forge_eval.analysis._metrics import MetricSummary, summarize_trials
from forge_eval.analysis._runs import load_run
from forge_eval.rundir import RunDir, write_json


def parse_budgets(text: str) -> tuple[int, ...]:
    """`"5,10,20"` -> (5, 10, 20): positive integers, sorted, without repeats."""
    try:
        budgets = sorted({int(part) for part in text.split(",") if part.strip()})
    except ValueError:
        budgets = []
    if not budgets or budgets[0] < 1:
        raise UsageError(
            f"--step-budget takes positive model-turn counts separated by commas; got {text!r}",
            hint="e.g. --step-budget 5,10,20",
        )
    return tuple(budgets)


def at_step_budget(trials: pd.DataFrame, budget: int) -> pd.DataFrame:
    """The trials as they would have scored had every trajectory been cut after `budget` model turns."""
    if "model_turns" not in trials.columns or trials["model_turns"].isna().any():
        raise UsageError(
            "step budgets need each trial's number of model turns, and these trials lack it",
            hint="rebuild trials.csv from the logs with this version (forge-eval report DIR --step-budget N)",
        )
    cut = trials["model_turns"].astype(float) > budget
    score = trials["score"].where(~cut | trials["score"].isna(), 0.0)
    return trials.assign(score=score, passed=trials["passed"].astype(bool) & ~cut)


def budget_curves(
    trials: pd.DataFrame,
    budgets: Iterable[int],
    *,
    epochs: int,
    graded: bool,
    fractional: bool = False,
    n_resamples: int = N_RESAMPLES,
    random_state: RandomState = 0,
) -> dict[int, dict[str, MetricSummary]]:
    """Budget -> every headline metric (with its CI) at that budget; same bootstrap seed at each budget."""
    return {
        budget: summarize_trials(
            at_step_budget(trials, budget),
            epochs=epochs,
            graded=graded,
            fractional=fractional,
            n_resamples=n_resamples,
            random_state=random_state,
        )
        for budget in budgets
    }


def turn_quantiles(trials: pd.DataFrame) -> dict[str, float]:
    """Median and 90th percentile of model turns per trial (where budgets start to bite)."""
    turns = trials["model_turns"].astype(float)
    if turns.empty:
        return {"median": math.nan, "p90": math.nan, "max": math.nan}
    return {"median": float(turns.median()), "p90": float(turns.quantile(0.9)), "max": float(turns.max())}


def write_budgets(
    run_dir: Path,
    budgets: tuple[int, ...],
    *,
    n_resamples: int = N_RESAMPLES,
    random_state: int = RANDOM_STATE,
) -> Path:
    """Compute every metric of the run in `run_dir` at each budget into `run_dir/budgets.json`.

    The report's step-budget section reads that file (success vs budget with its band).
    """
    run = load_run(run_dir)
    curves = budget_curves(
        run.trials,
        budgets,
        epochs=run.results.epochs,
        graded=run.graded,
        fractional=run.fractional,
        n_resamples=n_resamples,
        random_state=random_state,
    )
    data = {
        "budgets": [
            {"budget": budget, "metrics": {name: m.to_dict() for name, m in metrics.items()}}
            for budget, metrics in curves.items()
        ],
        "model_turns": turn_quantiles(run.trials),
        "definition": (
            "each metric recomputed as if every trajectory were cut at N model turns of the agent: a "
            "trial that needed more than N model calls fails (score 0), one that needed N or fewer keeps "
            "its outcome"
        ),
    }
    return write_json(RunDir(run_dir).budgets, data)
