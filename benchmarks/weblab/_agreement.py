"""How well an LLM judge agrees with weblab's ground truth: accuracy, false-success rate, Cohen's kappa.

Accuracy and false-success rate are proportions, with Wilson score intervals, which keep a width at 0 and
1 where a percentile bootstrap collapses to a point (a judge right on 24 of 24 trajectories is not shown
to be right always). When several trajectories share a task (the agreement task judges a solved and a
failed one per task) they are not independent: the interval then uses the effective sample size n / deff,
with Kish's design effect deff = 1 + (m - 1) * ICC from the one-way ANOVA intraclass correlation of the
outcome over tasks (m: the size-weighted mean number of trajectories per task), as Korn and Graubard (1998)
do with survey proportions; when every outcome is equal the ICC is undefined and the tasks are counted
(ICC 1). Cohen's kappa is computed in closed form, (p_o - p_e) / (1 - p_e), from the 2x2 table of
verifier and judge outcomes, with a percentile interval of a seeded bootstrap that resamples tasks (or
trajectories, one per task), keeping the pairing of the two raters.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from inspect_ai import Task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.log import EvalLog
from scipy import stats

from forge_eval.benchmarks.web import close_episode
from forge_eval.benchmarks.web.judges import judge_scorers
from forge_eval.benchmarks.weblab._data import select_tasks, task_of
from forge_eval.benchmarks.weblab._oracle import oracle_agent
from forge_eval.benchmarks.weblab._scorer import weblab_verifier
from forge_eval.benchmarks.weblab._task import weblab_setup

VERIFIER = "weblab_verifier"
PROPORTION_CI = "Wilson score interval, effective sample size n / design effect over tasks"
KAPPA_CI = "percentile bootstrap over tasks"


def confusion(truth: Sequence[bool], judged: Sequence[bool]) -> dict[str, int]:
    """tp: both success; fp: judge success, truth failure; fn; tn."""
    t, j = np.asarray(truth, bool), np.asarray(judged, bool)
    return {
        "tp": int(np.sum(t & j)),
        "fp": int(np.sum(~t & j)),
        "fn": int(np.sum(t & ~j)),
        "tn": int(np.sum(~t & ~j)),
    }


def cohen_kappa(truth: Sequence[bool], judged: Sequence[bool]) -> float:
    """Cohen's kappa of two binary raters (NaN when chance agreement is 1: both constant and equal)."""
    c = confusion(truth, judged)
    n = sum(c.values())
    if n == 0:
        return math.nan
    p_o = (c["tp"] + c["tn"]) / n
    p_yes = (c["tp"] + c["fn"]) / n * (c["tp"] + c["fp"]) / n
    p_no = (c["fp"] + c["tn"]) / n * (c["fn"] + c["tn"]) / n
    p_e = p_yes + p_no
    return math.nan if p_e == 1 else (p_o - p_e) / (1 - p_e)


def wilson(successes: float, n: float, level: float = 0.95) -> tuple[float, float]:
    """Wilson score interval of a proportion; `n` may be an effective (non-integer) sample size."""
    if n <= 0:
        return (math.nan, math.nan)
    z = float(stats.norm.ppf(0.5 + level / 2))
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return (max(0.0, centre - half), min(1.0, centre + half))


def design_effect(values: np.ndarray, clusters: np.ndarray) -> float:
    """Kish's design effect 1 + (m - 1) * ICC of a 0/1 outcome clustered by `clusters`, with the one-way
    ANOVA ICC clamped to [0, 1] (1 when every value is equal: nothing says the members are independent)."""
    _, index, sizes = np.unique(clusters, return_inverse=True, return_counts=True)
    n, k = values.size, sizes.size
    m = float((sizes**2).sum() / n)  # size-weighted mean cluster size
    if k == n:
        return 1.0
    if np.all(values == values[0]):
        return m
    means = np.bincount(index, weights=values) / sizes
    within = float(((values - means[index]) ** 2).sum() / (n - k))
    if k == 1:
        return m if within == 0 else 1.0
    between = float((sizes * (means - values.mean()) ** 2).sum() / (k - 1))
    n0 = (n - (sizes**2).sum() / n) / (k - 1)
    denominator = between + (n0 - 1) * within
    icc = 1.0 if denominator <= 0 else min(1.0, max(0.0, (between - within) / denominator))
    return 1 + (m - 1) * icc


def proportion_interval(values: np.ndarray, clusters: np.ndarray, level: float = 0.95) -> tuple[float, float]:
    """Wilson interval of mean(values) with the effective sample size over `clusters`."""
    if values.size == 0:
        return (math.nan, math.nan)
    n_eff = values.size / design_effect(values, clusters)
    return wilson(float(values.mean()) * n_eff, n_eff, level)


def _stats(t: np.ndarray, j: np.ndarray) -> dict[str, float]:
    failures = ~t
    return {
        "accuracy": float(np.mean(t == j)),
        "false_success_rate": float(np.mean(j[failures])) if failures.any() else math.nan,
        "kappa": cohen_kappa(t, j),
    }


@dataclass(frozen=True)
class Agreement:
    """Judge-vs-verifier agreement with 95% CIs (NaN where undefined); `ci_methods` says how each was
    made."""

    n: int
    n_tasks: int
    confusion: dict[str, int]
    estimates: dict[str, float]
    ci: dict[str, tuple[float, float]]
    ci_methods: dict[str, str]

    def to_dict(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "n_tasks": self.n_tasks,
            "confusion": self.confusion,
            **{
                k: {
                    "estimate": v,
                    "ci_low": self.ci[k][0],
                    "ci_high": self.ci[k][1],
                    "ci_method": self.ci_methods[k],
                }
                for k, v in self.estimates.items()
            },
        }


def _kappa_interval(
    t: np.ndarray, j: np.ndarray, clusters: np.ndarray, n_boot: int, seed: int, level: float
) -> tuple[float, float]:
    """Percentile bootstrap of kappa, tasks resampled with all their trajectories."""
    labels = np.unique(clusters)
    members = [np.flatnonzero(clusters == label) for label in labels]
    rng = np.random.default_rng(seed)
    draws = []
    for _ in range(n_boot):
        idx = np.concatenate([members[k] for k in rng.integers(0, labels.size, labels.size)])
        draws.append(cohen_kappa(t[idx], j[idx]))
    finite = np.asarray([v for v in draws if not math.isnan(v)])
    if not finite.size:
        return (math.nan, math.nan)
    alpha = (1 - level) / 2
    return (float(np.quantile(finite, alpha)), float(np.quantile(finite, 1 - alpha)))


def judge_agreement(
    truth: Sequence[bool],
    judged: Sequence[bool],
    n_boot: int = 2000,
    seed: int = 0,
    level: float = 0.95,
    tasks: Sequence[str] | None = None,
) -> Agreement:
    """Agreement of `judged` with `truth` (one pair per trajectory), with CIs; `tasks` names each
    trajectory's task when several share one (None: every trajectory is its own task)."""
    t, j = np.asarray(truth, bool), np.asarray(judged, bool)
    if t.shape != j.shape or t.size == 0:
        raise ValueError(f"need two equally long, non-empty outcome lists, got {t.size} and {j.size}")
    clusters = np.arange(t.size) if tasks is None else np.asarray([str(x) for x in tasks])
    if clusters.shape != t.shape:
        raise ValueError(f"need one task per trajectory, got {clusters.size} for {t.size}")
    failures = ~t
    ci = {
        "accuracy": proportion_interval((t == j).astype(float), clusters, level),
        "false_success_rate": proportion_interval(j[failures].astype(float), clusters[failures], level),
        "kappa": _kappa_interval(t, j, clusters, n_boot, seed, level),
    }
    methods = {"accuracy": PROPORTION_CI, "false_success_rate": PROPORTION_CI, "kappa": KAPPA_CI}
    n_tasks = int(np.unique(clusters).size)
    return Agreement(int(t.size), n_tasks, confusion(t, j), _stats(t, j), ci, methods)


def agreement_from_log(log: EvalLog, judge: str) -> Agreement:
    """Pairs each sample's verifier outcome with judge `judge`'s (scorer name) and measures agreement;
    trajectories of one task (`<task>@<variant>` sample ids) are one cluster."""
    truth, judged, tasks = [], [], []
    for sample in log.samples or []:
        scores = sample.scores or {}
        if VERIFIER in scores and judge in scores:
            truth.append(float(scores[VERIFIER].value) >= 1.0)  # type: ignore[arg-type]
            judged.append(float(scores[judge].value) >= 1.0)  # type: ignore[arg-type]
            tasks.append(task_of(sample.id).id)
    return judge_agreement(truth, judged, tasks=tasks)


def agreement_task(
    judges: str, task_ids: str | None = None, subset: str = "all", upstream_dir: str | None = None
) -> Task:
    """Oracle trajectories (solved and plausibly failed, one of each per task) judged beside the verifier
    by the official judges (upstream's code from the trees in `upstream_dir`, else the cache/download)."""
    samples = [
        Sample(
            id=f"{base.id}@{variant}",  # `task_of` reads the task id before the "@"
            input=base.input,
            target=base.target,
            metadata={**(base.metadata or {}), "oracle_variant": variant},
        )
        for base in select_tasks(subset=subset, task_ids=task_ids).samples
        for variant in ("solve", "wrong")
    ]
    return Task(
        dataset=MemoryDataset(samples, name="weblab-judge-agreement"),
        setup=weblab_setup(),
        solver=oracle_agent(),
        scorer=[weblab_verifier(), *judge_scorers(judges, upstream_dir)],
        cleanup=close_episode,
        name="weblab_judge_agreement",
    )
