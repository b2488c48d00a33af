"""The noise floor of a run: how far apart two runs must be before the gap means anything.

Three numbers answer it, all from the run's own trials:

- verdict flips: per task, the share of pairs of trials from different seeds whose verdicts differ (for
  independent seeds with pass probability p this estimates 2p(1 - p) without bias); a task "flipped"
  when its seeds did not all agree;
- the minimum detectable difference (MDD): the smallest difference in the headline metric that a paired
  comparison of the same tasks and seeds (`forge-eval compare`) detects with 80% power at the run's alpha,
  given this run's seed-to-seed spread within tasks. The comparison's estimand is the mean over tasks of
  each task's paired difference d_t, so the MDD is that of a two-sided paired t-test over tasks, solved
  on the noncentral t distribution. It is a floor: a real difference that varies from task to task
  adds task-to-task spread to d_t and needs more;
- coverage: trials scored out of trials attempted, and the infrastructure failures by message.
"""

import math
import re
from collections import Counter
from typing import Any

import numpy as np
import pandas as pd
from scipy import optimize, stats

from forge_eval._errors import UsageError
from forge_eval.analysis._bootstrap import CONFIDENCE_LEVEL
from forge_eval.analysis._metrics import trial_cells

#: The power at which the minimum detectable difference is stated (the usual 80%).
POWER = 0.8
_ERROR_CHARS = 200
_EXCEPTION = re.compile(r"^([A-Z][A-Za-z0-9_.]*(?:Error|Exception|Timeout|Exit|Interrupt))\b")
_VARYING = re.compile(r"\b(?:0x)?[0-9a-f]{8,}\b|\d{4,}")


def minimum_detectable_difference(sd: float, n: int, *, alpha: float = 0.05, power: float = POWER) -> float:
    """Smallest true mean difference a two-sided one-sample (paired) t-test on `n` values with standard
    deviation `sd` rejects with probability `power` at level `alpha`.

    Solves P(|T| > t_{1-alpha/2, n-1}) = power for T noncentral t with n - 1 degrees of freedom and
    noncentrality delta * sqrt(n) / sd. For large n it tends to (z_{1-alpha/2} + z_power) * sd / sqrt(n).
    """
    if n < 2:
        raise UsageError(f"a minimum detectable difference needs at least 2 paired values, got {n}")
    if not 0.0 < alpha < 1.0 or not 0.0 < power < 1.0:
        raise UsageError(f"alpha and power must be in (0, 1), got alpha={alpha}, power={power}")
    if sd < 0 or not math.isfinite(sd):
        raise UsageError(f"the standard deviation must be finite and >= 0, got {sd}")
    if sd == 0:
        return 0.0
    df = n - 1
    critical = stats.t.ppf(1 - alpha / 2, df)

    def shortfall(ncp: float) -> float:
        # the far tail P(T < -critical) is P(T > critical) at -ncp; scipy gives NaN where it underflows
        far = float(np.nan_to_num(stats.nct.sf(critical, df, -ncp), nan=0.0))
        return float(stats.nct.sf(critical, df, ncp)) + far - power

    upper = critical + stats.norm.ppf(power) + 1.0
    while shortfall(upper) < 0:
        upper *= 2
    ncp = optimize.brentq(shortfall, 0.0, upper, xtol=1e-10)
    return float(ncp * sd / math.sqrt(n))


def paired_sd(variances: pd.DataFrame) -> float | None:
    """Standard deviation of a task's paired difference d_t, averaged over tasks as Var(d_t) is.

    `variances` holds one row per task: `variance` (the within-task seed-to-seed variance of the cell
    values, NaN where the task has a single seed) and `n_cells` (cells averaged into the task's mean).
    Tasks with one seed take the mean variance of the others; None when no task has two seeds.
    """
    known = variances["variance"].dropna()
    if known.empty:
        return None
    filled = variances["variance"].fillna(known.mean())
    return float(math.sqrt((filled / variances["n_cells"]).mean()))


def task_variances(cells: pd.DataFrame, column: str) -> pd.DataFrame:
    """Per task: the sample variance (ddof 1) of `column` over its seeds, and the number of its cells."""
    present = cells.dropna(subset=[column])
    grouped = present.groupby("task_id")[column]
    return pd.DataFrame({"variance": grouped.var(ddof=1), "n_cells": grouped.size()})


def flip_rates(trials: pd.DataFrame) -> pd.DataFrame:
    """Per task with trials under >= 2 seeds: the share of pairs of trials from different seeds whose
    verdicts differ (`flip_rate`), and the number of seeds (`n_seeds`). Errored trials count as failed."""
    passed = trials["passed"].fillna(False).astype(bool) & pd.to_numeric(trials["score"]).notna()
    grouped = trials.assign(c=passed.astype(int)).groupby(["task_id", "seed"])["c"]
    counts = grouped.agg(["size", "sum"]).reset_index()
    rows = []
    for task, group in counts.groupby("task_id", sort=True):
        if len(group) < 2:
            continue
        n, c = group["size"].to_numpy(float), group["sum"].to_numpy(float)
        # ordered pairs of distinct seeds: sum_s sum_{s' != s} of pass(s) x fail(s'), over n_s x n_s'
        disagreeing = c.sum() * (n - c).sum() - (c * (n - c)).sum()
        pairs = (n.sum() ** 2 - (n**2).sum()) / 2
        rows.append({"task_id": str(task), "flip_rate": float(disagreeing / pairs), "n_seeds": len(group)})
    return pd.DataFrame(rows, columns=["task_id", "flip_rate", "n_seeds"])


def run_coverage(trials: pd.DataFrame, n_seeds: int, epochs: int) -> dict[str, Any]:
    """Trials scored out of trials attempted, what was never attempted, and each failure message's count.

    An attempted trial without a score is an infrastructure failure (the sandbox, the model endpoint, the
    harness): it counts as failed in the metrics, and is named here so a low score is not mistaken for
    the model's.
    """
    scored = int(pd.to_numeric(trials["score"]).notna().sum())
    attempted = len(trials)
    planned = int(trials["task_id"].nunique()) * n_seeds * epochs
    errors = [e for e in trials["error"].fillna("").astype(str).str.strip() if e]
    kinds = Counter(failure_kind(e) for e in errors)
    examples = {failure_kind(e): e[:_ERROR_CHARS] for e in reversed(errors)}
    return {
        "attempted": attempted,
        "scored": scored,
        "coverage": scored / attempted if attempted else None,
        "not_attempted": max(planned - attempted, 0),
        "infrastructure_failures": [
            {"error": kind, "count": count, "example": examples[kind]} for kind, count in kinds.most_common()
        ],
    }


def failure_kind(message: str) -> str:
    """What a failure message names, without what varies between occurrences: the exception's name when
    the message is one (`CancelledError('Cancelled via cancel scope 7f0d...')` -> `CancelledError`), else
    its first line with addresses and long numbers masked."""
    named = _EXCEPTION.match(message)
    if named:
        return named.group(1)
    first = message.splitlines()[0] if message else ""
    return _VARYING.sub("…", first)[:_ERROR_CHARS]


def noise_floor(
    trials: pd.DataFrame,
    *,
    epochs: int,
    graded: bool,
    fractional: bool = False,
    confidence_level: float = CONFIDENCE_LEVEL,
    power: float = POWER,
) -> dict[str, Any]:
    """The run's verdict flips across seeds and the MDD of its headline metric (`success_rate`).

    With fewer than 2 seeds on every task there is no seed-to-seed spread to measure: the numbers are
    None and `note` says why.
    """
    cells = trial_cells(trials, epochs=epochs, graded=graded, fractional=fractional)
    metric = "success_rate"
    flips = flip_rates(trials)
    variances = task_variances(cells, metric)
    n_tasks = len(variances)
    alpha = round(1 - confidence_level, 12)
    out: dict[str, Any] = {
        "metric": metric,
        "n_tasks": n_tasks,
        "n_seeds": int(trials["seed"].nunique()),
        "n_tasks_with_seeds": len(flips),
        "power": power,
        "alpha": alpha,
        "flip_rate": None,
        "tasks_flipped": None,
        "n_tasks_flipped": None,
        "seed_sd": None,
        "mdd": None,
        "mdd_normal": None,
        "per_task_flip": flips.to_dict(orient="records"),
        "estimator": (
            "flip rate: per task, the share of pairs of trials from different seeds with different verdicts, "
            "averaged over tasks with >= 2 seeds; MDD: the smallest difference in the mean over tasks of "
            f"paired (task, seed) differences that a two-sided paired t-test over tasks detects with "
            f"{power:.0%} power at alpha {alpha:g} (noncentral t), where each task's difference has variance "
            "2 s_t^2 / m_t (s_t^2: this run's seed-to-seed variance of the task's cells, m_t its seeds); a "
            "floor: a difference that varies between tasks needs more"
        ),
        "note": None,
    }
    sd = paired_sd(variances.assign(variance=2 * variances["variance"]))
    if flips.empty or sd is None:
        out["note"] = "one seed per task: no seed-to-seed spread to measure (run with --seeds 2 or more)"
        return out
    within = variances["variance"].dropna()
    out.update(
        flip_rate=float(flips["flip_rate"].mean()),
        tasks_flipped=float((flips["flip_rate"] > 0).mean()),
        n_tasks_flipped=int((flips["flip_rate"] > 0).sum()),
        seed_sd=float(np.sqrt(within.mean())),
    )
    if n_tasks < 2:
        out["note"] = "one task: a paired comparison over tasks needs at least 2"
        return out
    out["mdd"] = minimum_detectable_difference(sd, n_tasks, alpha=alpha, power=power)
    if sd == 0:
        out["note"] = "no seed-to-seed spread in this run: in a comparison the other run's spread sets it"
    z = stats.norm.ppf(1 - alpha / 2) + stats.norm.ppf(power)
    out["mdd_normal"] = float(z * sd / math.sqrt(n_tasks))
    return out


def paired_noise_floor(
    cells_a: pd.DataFrame, cells_b: pd.DataFrame, column: str, *, alpha: float = 0.05, power: float = POWER
) -> dict[str, Any]:
    """The MDD of a paired comparison of two runs' `column` on their shared (task, seed) cells, from both
    runs' seed-to-seed spread: Var(d_t) = s_a,t^2 / m_t + s_b,t^2 / m_t. None (with a note) when no shared
    task has two paired seeds or fewer than 2 tasks are shared."""
    keys = ["task_id", "seed"]
    both = cells_a[[*keys, column]].merge(cells_b[[*keys, column]], on=keys, suffixes=("_a", "_b"))
    both = both.dropna(subset=[f"{column}_a", f"{column}_b"])
    a = task_variances(both, f"{column}_a")
    b = task_variances(both, f"{column}_b")
    n_tasks = len(a)
    sd = paired_sd(pd.DataFrame({"variance": a["variance"] + b["variance"], "n_cells": a["n_cells"]}))
    if sd is None or n_tasks < 2:
        why = "fewer than 2 shared tasks" if n_tasks < 2 else "no shared task has 2 paired seeds"
        return {"mdd": None, "n_tasks": n_tasks, "power": power, "alpha": alpha, "note": why}
    mdd = minimum_detectable_difference(sd, n_tasks, alpha=alpha, power=power)
    return {"mdd": mdd, "n_tasks": n_tasks, "power": power, "alpha": alpha, "note": None}
