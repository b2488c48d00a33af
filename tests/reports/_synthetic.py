"""A synthetic run directory as `forge-eval run` writes one (results.json, trials.csv, logs/)."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

SEEDS = [11, 22, 33]
EPOCHS = 2
SCRIPT_TASK = "<script>alert('x')</script>"
TASKS = ["alpha", "beta", SCRIPT_TASK, "gamma", "delta"]
ERRORED = ("beta", 22, 1)  # (task, seed, epoch) of the one errored trial
NOT_RUN = ("delta", 33)  # the partial run never reached this task x seed
# score per (task index, seed index, epoch); passed = score >= 0.5
_SCORES = [
    [[1.0, 0.75], [0.5, 0.25], [0.0, 1.0]],
    [[0.9, 0.8], [0.6, None], [0.1, 0.2]],
    [[0.0, 0.0], [0.3, 0.7], [0.55, 0.45]],
    [[0.2, 0.4], [0.95, 0.5], [1.0, 1.0]],
    [[0.5, 0.5], [0.0, 0.05], [None, None]],
]


def _metric(
    estimate: float, low: float, high: float, per_seed: tuple[float, ...], estimator: str, **more: Any
) -> dict[str, Any]:
    """A metric of results.json over the 5 tasks and 28 trials of this run, with one estimate per seed."""
    seeds = [{"seed": seed, "estimate": value} for seed, value in zip(SEEDS, per_seed, strict=True)]
    return {
        "estimate": estimate,
        "ci_low": low,
        "ci_high": high,
        "per_seed": seeds,
        "n_tasks": 5,
        "n_trials": 28,
        "estimator": estimator,
        **more,
    }


METRICS: dict[str, dict[str, Any]] = {
    # written out of display order on purpose: the report must order them itself
    "mean_score": _metric(
        0.512345, 0.40001, 0.6249, (0.5, 0.45, 0.6), "mean trial score; percentile bootstrap"
    ),
    "pass^2": _metric(0.2, 0.0, 0.4, (0.4, 0.0, 0.25), "unbiased pass^k & co <b>"),
    "success_rate": _metric(
        0.5555,
        0.41666,
        0.7,
        (0.5, 0.7, 0.6),
        "mean of per-trial pass; two-level bootstrap over tasks and seeds",
        confidence_level=0.95,
        standard_error=0.0712,
        n_seeds=3,
    ),
    "pass@2": _metric(0.8, 0.6, 1.0, (0.8, 0.8, 0.75), "unbiased pass@k"),
}


def results(**overrides: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "benchmark": "forgelab",
        "model": 'openai/tiny & "quoted"',
        "harness": "react",
        "seeds": SEEDS,
        "epochs": EPOCHS,
        "threshold": 0.5,
        "versions": {"forge_eval": "0.1.0", "inspect_ai": "0.3.285", "python": "3.11.2"},
        "git_revision": "8cb9f9a0123456789",
        "command": "forge-eval run forgelab --seeds 3 --epochs 2 --out runs/r1",
        "created": "2026-11-29T11:00:00+00:00",
        "log_dir": "logs",
        "n_tasks": len(TASKS),
        "status": "partial",
        "task_options": {"quick": True, "subset": "<core>"},
        "metrics": METRICS,
    }
    data.update(overrides)
    return data


def trial_rows() -> list[dict[str, str]]:
    rows = []
    for t, task in enumerate(TASKS):
        for s, seed in enumerate(SEEDS):
            for epoch in range(EPOCHS):
                score = _SCORES[t][s][epoch]
                if (task, seed) == NOT_RUN:
                    continue
                errored = (task, seed, epoch) == ERRORED
                rows.append(
                    {
                        "task_id": task,
                        "seed": str(seed),
                        "epoch": str(epoch),
                        "score": "" if score is None else str(score),
                        "passed": "true" if score is not None and score >= 0.5 else "false",
                        "error": "SandboxTimeout: exceeded 600 s, <killed>" if errored else "",
                        "difficulty": "hard" if t % 2 else "easy",
                    }
                )
    return rows


def write_run(
    run_dir: Path, results_data: dict[str, Any] | None = None, rows: list[dict[str, str]] | None = None
) -> Path:
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "logs").mkdir(exist_ok=True)
    for seed in SEEDS:
        (run_dir / "logs" / f"2026-11-29T11-00-00_forgelab-seed{seed}.eval").write_bytes(b"PK")
    (run_dir / "results.json").write_text(json.dumps(results() if results_data is None else results_data))
    rows = trial_rows() if rows is None else rows
    with (run_dir / "trials.csv").open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return run_dir
