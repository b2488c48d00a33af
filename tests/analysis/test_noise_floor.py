"""The noise floor: verdict flips, the minimum detectable difference and coverage, checked against closed
forms and simulations (not against the code's own formulas)."""

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from _behavior_logs import eval_log, run_dir, sample, turn
from scipy import stats

from forge_eval import UsageError
from forge_eval.analysis import (
    compare_runs,
    load_run,
    minimum_detectable_difference,
    noise_floor,
    paired_noise_floor,
    run_coverage,
    trial_cells,
)
from forge_eval.reports import build_compare_report

Z = stats.norm.ppf(0.975) + stats.norm.ppf(0.8)


def _simulated_power(delta: float, sd: float, n: int, reps: int, rng: np.random.Generator) -> float:
    """Share of two-sided paired t-tests at alpha 0.05 that reject, on n differences ~ N(delta, sd^2)."""
    d = rng.normal(delta, sd, size=(reps, n))
    t = d.mean(axis=1) / (d.std(axis=1, ddof=1) / math.sqrt(n))
    return float((np.abs(t) > stats.t.ppf(0.975, n - 1)).mean())


def test_mdd_tends_to_the_normal_closed_form_and_has_80_percent_power_by_simulation() -> None:
    # large n: (z_.975 + z_.8) * sd / sqrt(n), the textbook closed form
    assert minimum_detectable_difference(0.3, 2000) == pytest.approx(Z * 0.3 / math.sqrt(2000), rel=2e-3)
    rng = np.random.default_rng(7)
    for n in (6, 12, 40):
        mdd = minimum_detectable_difference(0.25, n)
        assert mdd > Z * 0.25 / math.sqrt(n)  # the t-test pays for estimating the spread
        power = _simulated_power(mdd, 0.25, n, 40_000, rng)
        assert power == pytest.approx(0.8, abs=0.012), (n, power)
        # a difference of half the MDD is detected far less often
        assert _simulated_power(mdd / 2, 0.25, n, 20_000, rng) < 0.45
    assert minimum_detectable_difference(0.0, 10) == 0.0


def test_mdd_refuses_bad_input() -> None:
    for bad in ({"sd": 0.1, "n": 1}, {"sd": -1.0, "n": 5}, {"sd": 0.1, "n": 5, "alpha": 1.5}):
        with pytest.raises(UsageError):
            minimum_detectable_difference(**bad)


def _trials(outcomes: np.ndarray, errors: dict[tuple[int, int], str] | None = None) -> pd.DataFrame:
    """A trials table from a (tasks, seeds, epochs) array of 0/1 verdicts; `errors` marks errored trials."""
    rows = []
    for (t, s, e), value in np.ndenumerate(outcomes):
        error = (errors or {}).get((t, s), "") if e == 0 else ""
        score = math.nan if error else float(value)
        rows.append(
            {
                "task_id": f"t{t:03d}",
                "seed": s,
                "epoch": e + 1,
                "score": score,
                "passed": bool(value) and not error,
            }
        )
        rows[-1]["error"] = error
    return pd.DataFrame(rows)


def test_flip_rate_counts_disagreeing_pairs_of_trials_from_different_seeds() -> None:
    verdicts = np.array(
        [
            [[1], [0], [1]],  # 3 seed pairs, 2 disagree
            [[1], [1], [1]],  # stable
            [[0], [0], [1]],  # 2 of 3
        ]
    )
    floor = noise_floor(_trials(verdicts), epochs=1, graded=False)
    per_task = {t["task_id"]: t["flip_rate"] for t in floor["per_task_flip"]}
    assert per_task == pytest.approx({"t000": 2 / 3, "t001": 0.0, "t002": 2 / 3})
    assert floor["flip_rate"] == pytest.approx(4 / 9)
    assert floor["n_tasks_flipped"] == 2 and floor["tasks_flipped"] == pytest.approx(2 / 3)
    # with epochs: seed 0 passes 2/2, seed 1 fails 2/2: every one of the 4 cross-seed pairs disagrees
    two_epochs = noise_floor(_trials(np.array([[[1, 1], [0, 0]], [[1, 0], [1, 0]]])), epochs=2, graded=False)
    assert {t["task_id"]: t["flip_rate"] for t in two_epochs["per_task_flip"]} == {"t000": 1.0, "t001": 0.5}


def test_flip_rate_estimates_2p_1_minus_p_without_bias() -> None:
    rng = np.random.default_rng(3)
    p = rng.uniform(0, 1, size=400)
    verdicts = (rng.uniform(size=(400, 3, 1)) < p[:, None, None]).astype(int)
    floor = noise_floor(_trials(verdicts), epochs=1, graded=False)
    expected = float(np.mean(2 * p * (1 - p)))
    se = np.std([t["flip_rate"] for t in floor["per_task_flip"]]) / math.sqrt(400)
    assert abs(floor["flip_rate"] - expected) < 3 * se


def test_the_run_mdd_has_80_percent_power_for_a_paired_comparison_simulated_from_its_tasks() -> None:
    """A run of 40 tasks x 3 seeds with known pass probabilities: the MDD computed from one run's spread is
    the difference at which paired t-tests over tasks between two simulated runs reject about 80% of the time.
    """
    rng = np.random.default_rng(11)
    n_tasks, n_seeds = 40, 3
    p = rng.uniform(0.25, 0.6, size=n_tasks)

    def run(shift: float) -> np.ndarray:
        return (rng.uniform(size=(n_tasks, n_seeds)) < (p + shift)[:, None]).astype(float)

    mdds = [noise_floor(_trials(run(0.0)[:, :, None]), epochs=1, graded=False)["mdd"] for _ in range(200)]
    mdd = float(np.mean(mdds))
    # the closed form with the true spread: Var(d_t) = 2 p(1-p) / m, noncentral t over tasks
    true_sd = math.sqrt(np.mean(2 * p * (1 - p) / n_seeds))
    assert mdd == pytest.approx(minimum_detectable_difference(true_sd, n_tasks), rel=0.05)
    rejections = []
    for _ in range(3000):
        d = (run(mdd).mean(axis=1)) - run(0.0).mean(axis=1)
        t = d.mean() / (d.std(ddof=1) / math.sqrt(n_tasks))
        rejections.append(abs(t) > stats.t.ppf(0.975, n_tasks - 1))
    assert np.mean(rejections) == pytest.approx(0.8, abs=0.04)


def test_one_seed_has_no_noise_floor_and_says_why() -> None:
    floor = noise_floor(_trials(np.ones((4, 1, 1), dtype=int)), epochs=1, graded=False)
    assert floor["mdd"] is None and floor["flip_rate"] is None and "--seeds 2" in floor["note"]


def test_coverage_names_infrastructure_failures_by_kind_and_counts_missing_trials() -> None:
    errors = {
        (0, 0): "CancelledError('Cancelled via cancel scope 7f0d9876e520')",
        (1, 0): "CancelledError('Cancelled via cancel scope 7f0d9876e700')",
        (2, 1): "sandbox exited with 137 at 0x7fabc1234567",
    }
    trials = _trials(np.ones((3, 2, 1), dtype=int), errors)
    trials = trials[~((trials["task_id"] == "t002") & (trials["seed"] == 0))]  # never attempted
    block = run_coverage(trials, n_seeds=2, epochs=1)
    assert (block["attempted"], block["scored"], block["not_attempted"]) == (5, 2, 1)
    assert block["coverage"] == pytest.approx(2 / 5)
    kinds = {f["error"]: f["count"] for f in block["infrastructure_failures"]}
    assert kinds == {"CancelledError": 2, "sandbox exited with 137 at …": 1}


def _run(path: Path, values: dict[tuple[str, int], float]) -> Path:
    seeds = sorted({s for _, s in values})
    logs = [
        eval_log(
            [sample(t, [turn(text="done")], score=v) for (t, s), v in sorted(values.items()) if s == seed],
            seed=seed,
        )
        for seed in seeds
    ]
    out = run_dir(path, logs)
    results = json.loads((out / "results.json").read_text())
    results.update(threshold=1.0)
    (out / "results.json").write_text(json.dumps(results))
    return out


def test_compare_states_when_a_difference_is_under_the_noise_floor(tmp_path: Path) -> None:
    rng = np.random.default_rng(5)
    noisy = {(f"t{i}", s): float(rng.uniform() < 0.5) for i in range(10) for s in range(3)}
    shifted = {key: float(rng.uniform() < 0.55) for key in noisy}  # 5 points: well under the floor
    a, b = _run(tmp_path / "a", noisy), _run(tmp_path / "b", shifted)
    data = compare_runs([a, b], behavior=False, n_resamples=300)
    success = data["comparisons"][0]["metrics"]["success_rate"]
    cells = [trial_cells(load_run(run).trials, epochs=1, graded=False) for run in (a, b)]
    floor = paired_noise_floor(*cells, "success_rate")["mdd"]
    # closed form: both runs' within-task variances, averaged over tasks, noncentral t over 10 tasks
    both = [c.groupby("task_id")["success_rate"].var(ddof=1) for c in cells]
    sd = math.sqrt(((both[0] + both[1]) / 3).mean())
    assert floor == pytest.approx(minimum_detectable_difference(sd, 10)) and floor > 0.2
    assert success["noise_floor"] == pytest.approx(floor)
    assert success["under_noise_floor"] is True and abs(success["estimate"]) < floor
    html = build_compare_report(data, tmp_path / "cmp").read_text()
    assert "Under the noise floor: success_rate" in html
    cli = [sys.executable, "-m", "forge_eval._cli.main", "compare", str(a), str(b), "--no-behavior"]
    cli += ["--resamples", "300", "--out", str(tmp_path / "cli")]
    printed = subprocess.run(cli, capture_output=True, text=True, check=True).stdout
    [line] = [line for line in printed.splitlines() if line.strip().startswith("success_rate")]
    assert f"under the noise floor ({100 * floor:.1f} pp)" in line
    # every task passing in every seed is far above the noisy run's floor
    far = compare_runs([a, _run(tmp_path / "c", dict.fromkeys(noisy, 1.0))], behavior=False, n_resamples=300)
    metric = far["comparisons"][0]["metrics"]["success_rate"]
    assert metric["under_noise_floor"] is False and metric["estimate"] > metric["noise_floor"] > 0
    assert "Under the noise floor" not in build_compare_report(far, tmp_path / "far").read_text()
