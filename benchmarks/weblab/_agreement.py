"""How well an LLM judge agrees with weblab's ground truth: accuracy, false-success rate, Cohen's kappa.

Cohen's kappa is computed in closed form, (p_o - p_e) / (1 - p_e), from the 2x2 table of verifier and
judge outcomes; CIs are percentile intervals of a seeded bootstrap over trajectories (resampling the
pairs), which keeps the pairing of the two raters.
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

from forge_eval.benchmarks.web import close_episode
from forge_eval.benchmarks.web.judges import judge_scorers
from forge_eval.benchmarks.weblab._oracle import oracle_agent
from forge_eval.benchmarks.weblab._task import select_samples, weblab_setup, weblab_verifier

VERIFIER = "weblab_verifier"


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


def _stats(t: np.ndarray, j: np.ndarray) -> dict[str, float]:
    failures = ~t
    return {
        "accuracy": float(np.mean(t == j)),
        "false_success_rate": float(np.mean(j[failures])) if failures.any() else math.nan,
        "kappa": cohen_kappa(t, j),
    }


@dataclass(frozen=True)
class Agreement:
    """Judge-vs-verifier agreement with 95% percentile-bootstrap CIs (NaN where undefined)."""

    n: int
    confusion: dict[str, int]
    estimates: dict[str, float]
    ci: dict[str, tuple[float, float]]

    def to_dict(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "confusion": self.confusion,
            **{
                k: {"estimate": v, "ci_low": self.ci[k][0], "ci_high": self.ci[k][1]}
                for k, v in self.estimates.items()
            },
        }


def judge_agreement(
    truth: Sequence[bool], judged: Sequence[bool], n_boot: int = 2000, seed: int = 0, level: float = 0.95
) -> Agreement:
    """Agreement of `judged` with `truth` (one pair per trajectory), with bootstrap CIs."""
    t, j = np.asarray(truth, bool), np.asarray(judged, bool)
    if t.shape != j.shape or t.size == 0:
        raise ValueError(f"need two equally long, non-empty outcome lists, got {t.size} and {j.size}")
    rng = np.random.default_rng(seed)
    draws: dict[str, list[float]] = {"accuracy": [], "false_success_rate": [], "kappa": []}
    for _ in range(n_boot):
        idx = rng.integers(0, t.size, t.size)
        for k, v in _stats(t[idx], j[idx]).items():
            draws[k].append(v)
    alpha = (1 - level) / 2
    ci = {}
    for k, values in draws.items():
        finite = np.asarray([v for v in values if not math.isnan(v)])
        ci[k] = (
            (float(np.quantile(finite, alpha)), float(np.quantile(finite, 1 - alpha)))
            if finite.size
            else (math.nan,) * 2
        )
    return Agreement(int(t.size), confusion(t, j), _stats(t, j), ci)  # type: ignore[arg-type]


def agreement_from_log(log: EvalLog, judge: str) -> Agreement:
    """Pairs each sample's verifier outcome with judge `judge`'s (scorer name) and measures agreement."""
    truth, judged = [], []
    for sample in log.samples or []:
        scores = sample.scores or {}
        if VERIFIER in scores and judge in scores:
            truth.append(float(scores[VERIFIER].value) >= 1.0)  # type: ignore[arg-type]
            judged.append(float(scores[judge].value) >= 1.0)  # type: ignore[arg-type]
    return judge_agreement(truth, judged)


def agreement_task(judges: str, task_ids: str | None = None, subset: str = "all") -> Task:
    """Oracle trajectories (solved and plausibly failed, one of each per task) judged beside the verifier."""
    samples = [
        Sample(
            id=f"{base.id}@{variant}",  # `task_of` reads the task id before the "@"
            input=base.input,
            target=base.target,
            metadata={**(base.metadata or {}), "oracle_variant": variant},
        )
        for base in select_samples(subset, task_ids)
        for variant in ("solve", "wrong")
    ]
    return Task(
        dataset=MemoryDataset(samples, name="weblab-judge-agreement"),
        setup=weblab_setup(),
        solver=oracle_agent(),
        scorer=[weblab_verifier(), *judge_scorers(judges)],
        cleanup=close_episode,
        name="weblab_judge_agreement",
    )
