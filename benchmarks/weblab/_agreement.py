"""How well an LLM judge agrees with weblab's ground truth: accuracy, false-success rate, Cohen's kappa.

Accuracy and false-success rate are proportions, with Wilson score intervals, which keep a width at 0 and
1 where a percentile bootstrap collapses to a point (a judge right on 24 of 24 trajectories is not shown
to be right always). When several trajectories share a task (the agreement task judges a solved and a
failed one per task) they are not independent: the interval then uses the effective sample size n / deff,
with Kish's design effect deff = 1 + (m - 1) * ICC from the one-way ANOVA intraclass correlation of the
outcome over tasks (m: the size-weighted mean number of trajectories per task), as Korn and Graubard (1998)
do with survey proportions; when every outcome is equal the ICC is undefined and the tasks are counted
(ICC 1). Cohen's kappa is computed in closed form, (p_o - p_e) / (1 - p_e), from the 2x2 table of
verifier and judge outcomes. Its interval is taken conditional on the verifier's outcomes (the ground truth,
fixed by the design): when as many trajectories passed the verifier as failed it (the agreement task: one
solved and one failed per task), chance agreement is exactly 1/2 whatever the judge says, so kappa is exactly
2 * accuracy - 1 and its interval is 2 * (accuracy's interval) - 1. Otherwise kappa, at the observed share of
successes, is a function of the judge's sensitivity and specificity: its interval is kappa's range over the
box of their Wilson intervals (design effect over tasks), each at level 1 - (1 - level) / 2 (Bonferroni).
A percentile bootstrap of kappa collapses to [1, 1] when the judge agrees on every trajectory (it covered
the truth in 10-90% of simulated runs at 6-12 tasks); these cover (tests/benchmarks/web).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

import numpy as np
from inspect_ai import Task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.log import EvalLog

from forge_eval.benchmarks.web import close_episode
from forge_eval.benchmarks.web.judges import judge_scorers
from forge_eval.benchmarks.weblab._data import select_tasks, task_of
from forge_eval.benchmarks.weblab._oracle import oracle_agent
from forge_eval.benchmarks.weblab._scorer import weblab_verifier
from forge_eval.benchmarks.weblab._task import weblab_setup

VERIFIER = "weblab_verifier"
PROPORTION_CI = "Wilson score interval, effective sample size n / design effect over tasks"
KAPPA_CI_BALANCED = (
    "2 x accuracy's interval - 1 (as many verifier successes as failures: chance agreement 1/2)"
)
KAPPA_CI_BOX = (
    "range of kappa over the Bonferroni box of sensitivity's and specificity's Wilson intervals "
    "(design effect over tasks), at the observed share of verifier successes"
)


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
    # the standard library's quantile, not scipy's: importing scipy.stats costs every process that registers
    # the benchmarks (a CLI call, a cluster's shard) 0.5-0.7 s
    z = NormalDist().inv_cdf(0.5 + level / 2)
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


def kappa_of(prevalence: float, sensitivity: np.ndarray, specificity: np.ndarray) -> np.ndarray:
    """Cohen's kappa of a judge with this sensitivity and specificity on trajectories of which a share
    `prevalence` passed the verifier: 2 pi (1 - pi) (se + sp - 1) / (pi (1 - q) + (1 - pi) q), q the
    judge's success rate pi se + (1 - pi) (1 - sp) (the 2x2 closed form in proportions)."""
    pi = prevalence
    q = pi * sensitivity + (1 - pi) * (1 - specificity)
    return 2 * pi * (1 - pi) * (sensitivity + specificity - 1) / (pi * (1 - q) + (1 - pi) * q)


def kappa_interval(
    t: np.ndarray, j: np.ndarray, clusters: np.ndarray, level: float = 0.95
) -> tuple[tuple[float, float], str]:
    """Kappa's interval conditional on the verifier's outcomes `t`, and how it was made (module docstring):
    2 x accuracy's interval - 1 when as many passed as failed, else kappa's range over the Bonferroni box
    of the sensitivity and specificity intervals."""
    n_yes = int(t.sum())
    if n_yes == 0 or n_yes == t.size:
        return (math.nan, math.nan), KAPPA_CI_BOX  # kappa is undefined without both verifier outcomes
    if 2 * n_yes == t.size:
        low, high = proportion_interval((t == j).astype(float), clusters, level)
        return (2 * low - 1, 2 * high - 1), KAPPA_CI_BALANCED
    box = 1 - (1 - level) / 2
    se = proportion_interval(j[t].astype(float), clusters[t], box)
    sp = proportion_interval((~j[~t]).astype(float), clusters[~t], box)
    grid = np.linspace(0.0, 1.0, 201)
    sensitivity, specificity = np.meshgrid(se[0] + (se[1] - se[0]) * grid, sp[0] + (sp[1] - sp[0]) * grid)
    values = kappa_of(n_yes / t.size, sensitivity, specificity)
    return (float(values.min()), float(values.max())), KAPPA_CI_BOX


def judge_agreement(
    truth: Sequence[bool],
    judged: Sequence[bool],
    level: float = 0.95,
    tasks: Sequence[str] | None = None,
) -> Agreement:
    """Agreement of `judged` with `truth` (one pair per trajectory), with CIs; `tasks` names each
    trajectory's task when several share one (None: every trajectory is its own task). Every interval is
    closed form (no resampling), so it needs no seed."""
    t, j = np.asarray(truth, bool), np.asarray(judged, bool)
    if t.shape != j.shape or t.size == 0:
        raise ValueError(f"need two equally long, non-empty outcome lists, got {t.size} and {j.size}")
    clusters = np.arange(t.size) if tasks is None else np.asarray([str(x) for x in tasks])
    if clusters.shape != t.shape:
        raise ValueError(f"need one task per trajectory, got {clusters.size} for {t.size}")
    failures = ~t
    kappa_ci, kappa_method = kappa_interval(t, j, clusters, level)
    ci = {
        "accuracy": proportion_interval((t == j).astype(float), clusters, level),
        "false_success_rate": proportion_interval(j[failures].astype(float), clusters[failures], level),
        "kappa": kappa_ci,
    }
    methods = {"accuracy": PROPORTION_CI, "false_success_rate": PROPORTION_CI, "kappa": kappa_method}
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
