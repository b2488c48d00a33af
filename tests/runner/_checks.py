"""What every finished run directory must hold, whatever the model did (shared by e2e tests)."""

import json
from pathlib import Path

import pandas as pd


def check_run_dir(run: Path, *, seeds: list[int], n_tasks: int, model: str, epochs: int = 1) -> dict:
    """Assert the logs, results.json, trials.csv and report.html of a complete run; return results."""
    logs = sorted((run / "logs").glob("*.eval"))
    assert len(logs) == len(seeds), logs
    results = json.loads((run / "results.json").read_text())
    assert results["status"] == "complete"
    assert results["seeds"] == seeds and results["epochs"] == epochs and results["model"] == model
    assert results["n_tasks"] == n_tasks and results["command"].startswith("forge-eval run")
    success = results["metrics"]["success_rate"]
    assert 0.0 <= success["ci_low"] <= success["estimate"] <= success["ci_high"] <= 1.0
    assert [p["seed"] for p in success["per_seed"]] == seeds
    assert success["n_trials"] == n_tasks * len(seeds) * epochs
    trials = pd.read_csv(run / "trials.csv")
    assert len(trials) == n_tasks * len(seeds) * epochs and sorted(trials["seed"].unique()) == seeds
    # balanced cells: pass@1 is the mean over all trials
    assert abs(trials["passed"].mean() - success["estimate"]) < 1e-9
    report = (run / "report.html").read_text()
    assert f"{success['estimate'] * 100:.1f}%" in report
    assert "inspect view --log-dir" in report and "https://" not in report
    return results
