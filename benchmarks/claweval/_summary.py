"""results.json's Claw-Eval score, pass line and pass^3 / pass@3: upstream's own `score_summary.py`.

Upstream summarizes a run with `score_summary.py` (`analyze_model`): per task the average of its trials
with missing or ungraded ones counted as 0 up to 3, the share of tasks whose average passes (0.75), whose
any trial passes (pass@3) and whose every trial passes (pass^3). That code, run in upstream's venv on each
seed's traces (`_driver/summarize.py`), is the source of these numbers in results.json; forge-eval's own
bootstrap only adds the interval, and only where its estimate of the same quantity is the same number.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from inspect_ai.log import EvalLog

from forge_eval._errors import ForgeError
from forge_eval.benchmarks.claweval._driver import SUMMARIZE
from forge_eval.benchmarks.claweval._traces import newest_per_seed, write_traces
from forge_eval.benchmarks.claweval._trial import driver_env
from forge_eval.benchmarks.claweval._upstream import ensure_venv
from forge_eval.rundir import MetricResult, SeedEstimate

#: results.json's metric name (k: upstream's trials per task) -> the figure of `analyze_model`.
UPSTREAM_METRICS = {
    "mean_score": "overall_avg_score",
    "pass^{k}": "all_pass_rate",
    "pass@{k}": "any_pass_rate",
    "avg_pass": "avg_pass_rate",
}
_TIMEOUT_S = 600


def upstream_summaries(tree: Path, logs: list[EvalLog]) -> dict[int, dict[str, Any]]:
    """Upstream's `analyze_model` result for each seed's trials (seed -> result; empty: no trial).

    Raises:
        ForgeError: upstream's summary failed.
    """
    python = ensure_venv(tree)
    with tempfile.TemporaryDirectory(prefix="forge-claweval-summary-") as tmp:
        folders = {}
        for seed, log in newest_per_seed(logs).items():
            if write_traces(log, Path(tmp) / f"seed{seed}"):
                folders[seed] = Path(tmp) / f"seed{seed}"
        if not folders:
            return {}
        out = Path(tmp) / "summary.json"
        done = subprocess.run(
            [str(python), str(SUMMARIZE), str(tree), str(out), *map(str, folders.values())],
            cwd=tree, env=driver_env(tree, Path(tmp)), capture_output=True, text=True, timeout=_TIMEOUT_S,
        )
        if done.returncode != 0 or not out.is_file():
            raise ForgeError(
                f"upstream's score_summary.py failed on the run's traces (exit {done.returncode}): "
                + (done.stderr.strip().splitlines() or ["no output"])[-1],
                hint="the Inspect logs keep every trace; re-running the same command summarizes again",
            )
        return dict(zip(folders, json.loads(out.read_text(encoding="utf-8")), strict=True))


def upstream_metrics(
    tree: Path, logs: list[EvalLog], ours: Mapping[str, Mapping[str, Any]]
) -> dict[str, dict[str, Any]]:
    """The metrics upstream's summary gives, in results.json's shape (the mean over seeds, per-seed
    figures); `ours`: forge-eval's metrics, whose interval is kept where its estimate is upstream's."""
    summaries = upstream_summaries(tree, logs)
    if not summaries:
        return {}
    first = next(iter(summaries.values()))
    trials, threshold = first["trials"], first["pass_threshold"]
    basis = (
        f"upstream's score_summary.py (analyze_model) on each seed's traces: pass line {threshold}, "
        f"missing or ungraded trials count as 0 up to {trials}; mean over seeds"
    )
    metrics = {}
    for template, key in UPSTREAM_METRICS.items():
        name = template.format(k=trials)
        per_seed = [SeedEstimate(seed=seed, estimate=float(s[key])) for seed, s in summaries.items()]
        estimate = sum(s.estimate or 0.0 for s in per_seed) / len(per_seed)
        own = ours.get(name) or {}
        same = own.get("estimate") is not None and abs(own["estimate"] - estimate) < 1e-9
        interval = "interval: forge-eval's bootstrap" if same else "no interval (forge-eval's own differs)"
        metrics[name] = MetricResult(
            estimate=estimate,
            ci_low=own.get("ci_low") if same else None,
            ci_high=own.get("ci_high") if same else None,
            standard_error=own.get("standard_error") if same else None,
            per_seed=per_seed,
            n_tasks=max(int(s["n_tasks"]) for s in summaries.values()),
            n_trials=sum(int(s["graded_files"]) for s in summaries.values()),
            estimator=f"{basis}; {interval}",
        ).model_dump()
    return metrics
