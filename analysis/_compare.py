"""`forge-eval compare`: paired differences of two or more runs' headline metrics on shared tasks x seeds.

Each run is read from its directory (results.json for the protocol, the Inspect logs for the trials: the
logs are the single source of truth). Every run after the first is compared with the first, the baseline:
per (task, seed) cell, the run's value minus the baseline's, averaged as results.json averages (the mean
over tasks of each task's mean over its seeds, so a task weighs the same however many of its seeds
finished), with `paired_difference`'s bootstrap (tasks resampled, each keeping its paired cells). Cells one
run lacks are dropped and counted, and a plain sentence says which tasks, seeds or epochs did not match, so
a reader never mistakes a partial pairing for a full one. When the two runs' protocol records differ
(another judge, prompt, sampling setting, task subset, ...), `protocol_differences` lists how. Each
difference carries the comparison's noise floor (`noise_floor`: the minimum difference it detects with 80%
power, from both runs' seed-to-seed spread) and `under_noise_floor` when the difference is smaller.
"""

from pathlib import Path
from typing import Any

import pandas as pd

from forge_eval._errors import UsageError
from forge_eval.analysis._bootstrap import N_RESAMPLES, RANDOM_STATE, STATISTICS
from forge_eval.analysis._budget import at_step_budget
from forge_eval.analysis._metrics import HEADLINE_STATISTIC, cell_metrics, summarize_trials, trial_cells
from forge_eval.analysis._noise import paired_noise_floor
from forge_eval.analysis._paired import paired_difference
from forge_eval.analysis._runs import RunTrials, load_run
from forge_eval.analysis.behavior import compare_behavior, read_run_transcripts
from forge_eval.rundir import differences


def _matching(a: RunTrials, b: RunTrials) -> dict[str, Any]:
    """What the two runs share, and a sentence for each way they do not match."""
    tasks_a, tasks_b = set(a.trials["task_id"]), set(b.trials["task_id"])
    seeds_a, seeds_b = set(a.trials["seed"]), set(b.trials["seed"])
    notes = []
    if tasks_a != tasks_b:
        notes.append(
            f"tasks differ: {len(tasks_a - tasks_b)} only in the baseline, {len(tasks_b - tasks_a)} only in "
            f"this run, {len(tasks_a & tasks_b)} shared; only shared tasks are compared"
        )
    if seeds_a != seeds_b:
        notes.append(
            f"seeds differ: baseline {sorted(seeds_a)}, this run {sorted(seeds_b)}; only cells with the same "
            "task and seed are paired"
        )
    if a.results.epochs != b.results.epochs:
        notes.append(
            f"epochs differ ({a.results.epochs} vs {b.results.epochs}): both are cut to the first "
            f"{min(a.results.epochs, b.results.epochs)} epochs"
        )
    return {
        "matched": not notes,
        "notes": notes,
        "tasks_only_baseline": sorted(tasks_a - tasks_b),
        "tasks_only_run": sorted(tasks_b - tasks_a),
        "seeds_only_baseline": sorted(int(s) for s in seeds_a - seeds_b),
        "seeds_only_run": sorted(int(s) for s in seeds_b - seeds_a),
    }


def _difference(
    cells_a: pd.DataFrame, cells_b: pd.DataFrame, name: str, n_resamples: int, random_state: int
) -> dict[str, Any]:
    both = cells_a[["task_id", "seed", name]].merge(
        cells_b[["task_id", "seed", name]], on=["task_id", "seed"], suffixes=("_a", "_b")
    )
    both = both.dropna(subset=[f"{name}_a", f"{name}_b"])
    out: dict[str, Any] = {
        "baseline": _task_mean(both, f"{name}_a"),
        "run": _task_mean(both, f"{name}_b"),
        "n_paired": len(both),
        "n_tasks": int(both["task_id"].nunique()),
    }
    if both["task_id"].nunique() < 2:
        diff = _task_mean(both.assign(d=both[f"{name}_b"] - both[f"{name}_a"]), "d")
        no_interval = {"ci_low": None, "ci_high": None, "n_unpaired": None, "estimator": None}
        return {**out, "estimate": diff, **no_interval, **_noise_floor(cells_a, cells_b, name, diff)}
    result = paired_difference(
        cells_a,
        cells_b,
        value=name,
        statistic=HEADLINE_STATISTIC,
        n_resamples=n_resamples,
        random_state=random_state,
    )
    d = result.difference
    return {
        **out,
        "estimate": d.estimate,
        "ci_low": d.ci_low,
        "ci_high": d.ci_high,
        "n_unpaired": result.n_dropped,
        "estimator": d.estimator,
        **_noise_floor(cells_a, cells_b, name, d.estimate),
    }


def _noise_floor(cells_a: pd.DataFrame, cells_b: pd.DataFrame, name: str, estimate: float | None) -> dict:
    """The comparison's noise floor (the difference it detects with 80% power given both runs' seed-to-seed
    spread) and whether this difference is under it: such a gap is not evidence of a difference."""
    floor = paired_noise_floor(cells_a, cells_b, name)
    mdd = floor["mdd"]
    under = None if mdd is None or estimate is None else bool(abs(estimate) < mdd)
    return {"noise_floor": mdd, "under_noise_floor": under, "noise_floor_note": floor["note"]}


def _task_mean(cells: pd.DataFrame, column: str) -> float | None:
    """results.json's estimand on these cells: the mean over tasks of each task's mean over its seeds."""
    if cells.empty:
        return None
    return float(cells.groupby("task_id")[column].mean().mean())


def _per_task(cells_a: pd.DataFrame, cells_b: pd.DataFrame) -> list[dict[str, Any]]:
    a = cells_a.groupby("task_id")["success_rate"].mean()
    b = cells_b.groupby("task_id")["success_rate"].mean()
    rows = []
    for task in sorted(set(a.index) | set(b.index)):
        va = float(a[task]) if task in a.index else None
        vb = float(b[task]) if task in b.index else None
        diff = vb - va if va is not None and vb is not None else None
        rows.append({"task_id": str(task), "baseline": va, "run": vb, "difference": diff})
    return rows


def _per_seed(cells_a: pd.DataFrame, cells_b: pd.DataFrame) -> list[dict[str, Any]]:
    both = cells_a.merge(cells_b, on=["task_id", "seed"], suffixes=("_a", "_b"))
    means = both.groupby("seed")[["success_rate_a", "success_rate_b"]].mean()
    return [
        {"seed": int(seed), "baseline": float(row["success_rate_a"]), "run": float(row["success_rate_b"])}
        for seed, row in means.iterrows()
    ]


def _budgets(
    a: pd.DataFrame,
    b: pd.DataFrame,
    budgets: tuple[int, ...],
    epochs: int,
    kind: dict[str, bool],
    n: int,
    seed: int,
) -> list[dict[str, Any]]:
    """Each run's success at every budget, and their paired difference; each run is cut once per budget."""
    rows = []
    for budget in budgets:
        cut = [at_step_budget(t, budget) for t in (a, b)]
        success = [summarize_trials(t, epochs=epochs, **kind, n_resamples=n, random_state=seed) for t in cut]
        cells = [trial_cells(t, epochs=epochs, **kind) for t in cut]
        rows.append(
            {
                "budget": budget,
                "baseline": success[0]["success_rate"].to_dict(),
                "run": success[1]["success_rate"].to_dict(),
                "difference": _difference(*cells, "success_rate", n, seed),
            }
        )
    return rows


def compare_pair(
    baseline: RunTrials,
    run: RunTrials,
    *,
    budgets: tuple[int, ...] = (),
    n_resamples: int = N_RESAMPLES,
    random_state: int = RANDOM_STATE,
) -> dict[str, Any]:
    """Every headline metric of `run` minus `baseline` on their shared (task, seed) cells, with CIs."""
    if baseline.results.benchmark != run.results.benchmark:
        raise UsageError(
            f"cannot compare runs of different benchmarks: {baseline.path} is "
            f"{baseline.results.benchmark}, {run.path} is {run.results.benchmark}"
        )
    epochs = min(baseline.results.epochs, run.results.epochs)
    kind = {"graded": baseline.graded and run.graded, "fractional": baseline.fractional and run.fractional}
    a = baseline.trials[baseline.trials["epoch"] <= epochs]
    b = run.trials[run.trials["epoch"] <= epochs]
    cells_a = trial_cells(a, epochs=epochs, **kind)
    cells_b = trial_cells(b, epochs=epochs, **kind)
    metrics = {
        name: _difference(cells_a, cells_b, name, n_resamples, random_state)
        for name in cell_metrics(epochs, **kind)
    }
    return {
        "baseline": str(baseline.path),
        "run": str(run.path),
        "epochs": epochs,
        "matching": _matching(baseline, run),
        "protocol_differences": differences(baseline.results.protocol, run.results.protocol),
        "metrics": metrics,
        "per_task": _per_task(cells_a, cells_b),
        "per_seed": _per_seed(cells_a, cells_b),
        "step_budgets": _budgets(a, b, budgets, epochs, kind, n_resamples, random_state) if budgets else [],
    }


def _behavior(baseline: Path, run: Path, n_resamples: int, random_state: int) -> dict[str, Any]:
    """Paired differences of the behavior metrics (overall group), run minus baseline."""
    data = compare_behavior(
        read_run_transcripts(run),
        read_run_transcripts(baseline),
        n_resamples=n_resamples,
        random_state=random_state,
    )
    return data["groups"].get("overall", {}).get("capabilities", {})


def compare_runs(
    paths: list[Path],
    *,
    budgets: tuple[int, ...] = (),
    behavior: bool = True,
    n_resamples: int = N_RESAMPLES,
    random_state: int = RANDOM_STATE,
) -> dict[str, Any]:
    """Compare every run after the first with the first (the baseline).

    Args:
        paths: Run directories; the first is the baseline.
        budgets: Step budgets (model turns) at which success is compared too.
        behavior: Also compare the behavior metrics (reads every transcript; slower).
        n_resamples: Bootstrap resamples per interval.
        random_state: Bootstrap seed.
    """
    if len(paths) < 2:
        raise UsageError("compare needs at least two run directories", hint="forge-eval compare RUN_A RUN_B")
    if n_resamples < 100:
        raise UsageError(f"--resamples must be at least 100, got {n_resamples}")
    runs = [load_run(Path(p)) for p in paths]
    comparisons = []
    for run in runs[1:]:
        pair = compare_pair(runs[0], run, budgets=budgets, n_resamples=n_resamples, random_state=random_state)
        if behavior:
            pair["behavior"] = _behavior(runs[0].path, run.path, n_resamples, random_state)
        comparisons.append(pair)
    statistic = STATISTICS.get(HEADLINE_STATISTIC).description
    return {
        "direction": "each run minus the baseline (the first run)",
        "runs": [r.describe() for r in runs],
        "comparisons": comparisons,
        "estimator": (
            f"per metric, run minus baseline on paired (task, seed) cells, {statistic} "
            "(as in results.json: each task weighs the same however many of its seeds finished); "
            f"95% BCa bootstrap resampling tasks, each keeping its cells; {n_resamples} resamples, "
            f"seed {random_state}"
        ),
    }
