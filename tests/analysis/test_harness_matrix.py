"""A harness matrix's numbers on made-up runs of known outcomes: every pair's paired difference and its
interval agree with scipy's BCa bootstrap over the same per-task paired differences (overall, at a matched
step budget, and for calls per task), pairs come in the harnesses' order, and default budgets are each
harness's median model turns."""

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from forge_eval.analysis import HarnessRun, RunTrials, default_budgets, harness_matrix, summarize_trials
from forge_eval.analysis.behavior import CALL_COLUMNS, ROLLOUT_COLUMNS, Transcripts
from forge_eval.rundir import RunResults

N_TASKS, SEEDS = 14, (0, 1, 2)
RESAMPLES = 10_000


def _trials(rng: np.random.Generator, base: np.ndarray, lift: float, turns: tuple[int, int]) -> pd.DataFrame:
    rows = []
    for t in range(N_TASKS):
        for seed in SEEDS:
            passed = bool(rng.random() < min(1.0, base[t] + lift))
            rows.append(
                {
                    "task_id": f"task-{t:02d}",
                    "seed": seed,
                    "epoch": 1,
                    "score": float(passed),
                    "passed": passed,
                    "error": "",
                    "model_turns": int(rng.integers(*turns)),
                }
            )
    return pd.DataFrame(rows)


def _harness(name: str, trials: pd.DataFrame) -> HarnessRun:
    metrics = summarize_trials(trials, epochs=1, graded=False, n_resamples=200)
    results = RunResults.model_validate(
        {
            "benchmark": "made-up",
            "model": "none",
            "harness": name,
            "seeds": list(SEEDS),
            "epochs": 1,
            "status": "complete",
            "metrics": {k: m.to_dict() for k, m in metrics.items()},
        }
    )
    usage = trials[["task_id", "seed", "epoch"]].assign(
        calls=trials["model_turns"],
        prompt_tokens=trials["model_turns"] * 900,
        completion_tokens=trials["model_turns"] * 60,
        cached_tokens=0,
        total_tokens=trials["model_turns"] * 960,
    )
    empty = Transcripts(pd.DataFrame(columns=CALL_COLUMNS), pd.DataFrame(columns=ROLLOUT_COLUMNS))
    return HarnessRun(name, RunTrials(Path(name), results, trials), empty, usage)


@pytest.fixture(scope="module")
def runs() -> list[HarnessRun]:
    rng = np.random.default_rng(7)
    base = rng.uniform(0.1, 0.7, N_TASKS)
    return [
        _harness("react", _trials(rng, base, 0.0, (2, 9))),
        _harness("codex", _trials(rng, base, 0.25, (4, 15))),
        _harness("openclaw", _trials(rng, base, 0.1, (3, 12))),
    ]


@pytest.fixture(scope="module")
def matrix(runs: list[HarnessRun]) -> dict:
    return harness_matrix(runs, budgets=(5,), n_resamples=RESAMPLES, random_state=0)


def _per_task_difference(a: pd.DataFrame, b: pd.DataFrame, column: str) -> np.ndarray:
    both = a.merge(b, on=["task_id", "seed", "epoch"], suffixes=("_a", "_b"))
    d = both[f"{column}_b"].astype(float) - both[f"{column}_a"].astype(float)
    return both.assign(d=d).groupby("task_id")["d"].mean().to_numpy()


def _scipy(d: np.ndarray) -> tuple[float, float]:
    result = stats.bootstrap((d,), np.mean, method="BCa", n_resamples=RESAMPLES, random_state=1)
    return result.confidence_interval.low, result.confidence_interval.high


def _check(ours: dict, d: np.ndarray) -> None:
    assert ours["estimate"] == pytest.approx(d.mean(), abs=1e-12)
    low, high = _scipy(d)
    # two Monte Carlo bootstraps of the same statistic: the bounds agree to a small part of the spread
    tolerance = 0.06 * d.std()
    assert ours["ci_low"] == pytest.approx(low, abs=tolerance)
    assert ours["ci_high"] == pytest.approx(high, abs=tolerance)


def test_pairs_follow_the_harness_order(matrix):
    assert matrix["baseline"] == "react" and matrix["order"] == ["react", "codex", "openclaw"]
    assert [(p["a"], p["b"]) for p in matrix["pairs"]] == [
        ("react", "codex"),
        ("react", "openclaw"),
        ("codex", "openclaw"),
    ]
    assert matrix["pairs"][0]["direction"] == "codex minus react"


def test_paired_success_difference_agrees_with_scipy(runs, matrix):
    for pair in matrix["pairs"]:
        a, b = (next(r for r in runs if r.name == n).run.trials for n in (pair["a"], pair["b"]))
        d = _per_task_difference(a, b, "passed")
        success = pair["metrics"]["success_rate"]
        _check(success, d)
        assert success["n_paired"] == N_TASKS * len(SEEDS)
    # codex's lift of 25 points shows as a difference whose interval excludes 0
    assert matrix["pairs"][0]["metrics"]["success_rate"]["ci_low"] > 0


def test_difference_at_a_matched_step_budget_agrees_with_scipy(runs, matrix):
    a, b = runs[0].run.trials, runs[1].run.trials
    cut = [t.assign(passed=t["passed"] & (t["model_turns"] <= 5)) for t in (a, b)]
    [at_five] = matrix["pairs"][0]["step_budgets"]
    assert at_five["budget"] == 5
    _check(at_five["difference"], _per_task_difference(*cut, "passed"))
    # codex needs more turns: at 5 turns most of its lift is gone
    overall = matrix["pairs"][0]["metrics"]["success_rate"]["estimate"]
    assert at_five["difference"]["estimate"] < overall


def test_calls_and_tokens_per_task(runs, matrix):
    react = matrix["runs"]["react"]["usage"]
    turns = runs[0].run.trials.groupby("task_id")["model_turns"].mean()
    assert react["mean_per_task"]["calls"] == pytest.approx(turns.mean())
    assert react["mean_per_task"]["total_tokens"] == pytest.approx(960 * turns.mean())
    assert react["per_task"]["task-00"]["calls"] == pytest.approx(turns["task-00"])
    calls = matrix["pairs"][0]["usage"]["calls"]
    _check(calls, _per_task_difference(runs[0].usage, runs[1].usage, "calls"))


def test_each_harness_keeps_its_headline(runs, matrix):
    for run in runs:
        recorded = matrix["runs"][run.name]["metrics"]["success_rate"]
        assert recorded == run.run.results.metrics["success_rate"].model_dump(mode="json")
        assert set(matrix["runs"][run.name]["capabilities"]) >= {"error_recovery", "self_verification"}


def test_default_budgets_are_each_harness_median_turns(runs):
    medians = [r.run.trials["model_turns"].median() for r in runs]
    assert default_budgets(runs) == tuple(sorted({math.ceil(m) for m in medians}))
    assert harness_matrix(runs[:2], n_resamples=200)["step_budgets"] == sorted(
        {math.ceil(m) for m in medians[:2]}
    )
