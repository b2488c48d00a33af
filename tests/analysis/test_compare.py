"""`forge-eval compare` and step budgets: synthetic runs with known differences and known cut points."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from _behavior_logs import Call, eval_log, run_dir, sample, turn

from forge_eval import UsageError
from forge_eval.analysis import (
    RunTrials,
    at_step_budget,
    compare_pair,
    compare_runs,
    load_run,
    parse_budgets,
    write_budgets,
)
from forge_eval.rundir import RunResults

LS = Call("bash", {"command": "ls"}, "x")


def _turns(n: int) -> list:
    """A trajectory of `n` model turns: n - 1 tool calls, then the final answer."""
    return [turn(LS) for _ in range(n - 1)] + [turn(text="done")]


def _run(path: Path, outcomes: dict[tuple[str, int], tuple[float, int]], benchmark: str = "fixture") -> Path:
    """A run directory whose (task, seed) trials have the given (score, model turns)."""
    seeds = sorted({seed for _, seed in outcomes})
    logs = [
        eval_log(
            [
                sample(task, _turns(n), score=score)
                for (task, s), (score, n) in sorted(outcomes.items())
                if s == seed
            ],
            seed=seed,
        )
        for seed in seeds
    ]
    out = run_dir(path, logs)
    results = json.loads((out / "results.json").read_text())
    results.update(benchmark=benchmark, threshold=1.0)
    (out / "results.json").write_text(json.dumps(results))
    return out


def test_model_turns_are_read_from_the_logs_and_budgets_cut_at_them(tmp_path: Path) -> None:
    run = _run(
        tmp_path / "a", {("t1", 0): (1.0, 1), ("t2", 0): (1.0, 3), ("t3", 0): (0.0, 5), ("t4", 0): (1.0, 2)}
    )
    trials = load_run(run).trials.set_index("task_id")
    assert trials["model_turns"].to_dict() == {"t1": 1, "t2": 3, "t3": 5, "t4": 2}
    cut = at_step_budget(trials.reset_index(), 2).set_index("task_id")
    assert cut["passed"].to_dict() == {"t1": True, "t2": False, "t3": False, "t4": True}
    assert cut["score"].to_dict() == {"t1": 1.0, "t2": 0.0, "t3": 0.0, "t4": 1.0}
    data = json.loads(write_budgets(run, (1, 2, 3, 10), n_resamples=200).read_text())
    success = [b["metrics"]["success_rate"]["estimate"] for b in data["budgets"]]
    assert success == [0.25, 0.5, 0.75, 0.75]  # t3 fails at any budget
    assert data["model_turns"]["max"] == 5


def test_budgets_parse_and_refuse_bad_input() -> None:
    assert parse_budgets("10,5, 5") == (5, 10)
    for bad in ("", "0", "five", "3,-1"):
        with pytest.raises(UsageError, match="step-budget"):
            parse_budgets(bad)


def test_compare_gives_the_paired_difference_and_says_what_did_not_match(tmp_path: Path) -> None:
    base = {(f"t{i}", s): (float(i % 2), 2) for i in range(8) for s in (0, 1)}  # 50%
    better = {(f"t{i}", s): (1.0 if i < 6 else 0.0, 2) for i in range(8) for s in (0, 1)}  # 75%
    a, b = _run(tmp_path / "a", base), _run(tmp_path / "b", better)
    [pair] = compare_runs([a, b], behavior=False, n_resamples=500)["comparisons"]
    diff = pair["metrics"]["success_rate"]
    assert pair["matching"]["matched"] and pair["matching"]["notes"] == []
    assert (diff["baseline"], diff["run"], diff["estimate"]) == pytest.approx((0.5, 0.75, 0.25))
    assert diff["ci_low"] <= 0.25 <= diff["ci_high"] and diff["n_paired"] == 16
    assert {t["task_id"]: t["difference"] for t in pair["per_task"]}["t0"] == pytest.approx(1.0)

    partial = {k: v for k, v in better.items() if k[1] == 0 and k[0] != "t7"}
    c = _run(tmp_path / "c", partial)
    [pair] = compare_runs([a, c], behavior=False, n_resamples=500)["comparisons"]
    notes = " ".join(pair["matching"]["notes"])
    assert "tasks differ: 1 only in the baseline" in notes and "seeds differ" in notes
    assert pair["matching"]["tasks_only_baseline"] == ["t7"] and pair["matching"]["seeds_only_baseline"] == [
        1
    ]
    assert (
        pair["metrics"]["success_rate"]["n_paired"] == 7
        and pair["metrics"]["success_rate"]["n_unpaired"] == 9
    )


def test_compare_at_matched_step_budgets(tmp_path: Path) -> None:
    # the baseline solves every task in 2 turns; the run solves them all but needs 4 turns for half
    base = {(f"t{i}", 0): (1.0, 2) for i in range(6)}
    slow = {(f"t{i}", 0): (1.0, 2 if i < 3 else 4) for i in range(6)}
    data = compare_runs(
        [_run(tmp_path / "a", base), _run(tmp_path / "b", slow)],
        budgets=(2, 4),
        behavior=False,
        n_resamples=300,
    )
    [pair] = data["comparisons"]
    assert pair["metrics"]["success_rate"]["estimate"] == 0.0  # unlimited: both solve everything
    by_budget = {b["budget"]: b for b in pair["step_budgets"]}
    assert by_budget[2]["difference"]["estimate"] == pytest.approx(-0.5)
    assert (
        by_budget[2]["run"]["estimate"] == pytest.approx(0.5)
        and by_budget[4]["difference"]["estimate"] == 0.0
    )


def _trials(values: np.ndarray) -> pd.DataFrame:
    tasks, seeds = np.indices(values.shape)
    return pd.DataFrame(
        {
            "task_id": [f"t{t}" for t in tasks.ravel()],
            "seed": seeds.ravel(),
            "epoch": 1,
            "score": values.ravel().astype(float),
            "passed": values.ravel().astype(bool),
            "model_turns": 1,
        }
    )


@pytest.mark.slow
def test_compare_intervals_cover_a_known_shift_in_simulation() -> None:
    """40 tasks x 3 seeds, one trial each; the run's pass probability is the baseline's + 0.1 per task
    (p ~ U(0.1, 0.85)), so the true mean difference is exactly 0.1."""
    rng = np.random.default_rng(17)
    results = RunResults(
        benchmark="sim", model="m", harness="h", seeds=[0, 1, 2], epochs=1, status="complete", metrics={}
    )
    repetitions, hits = 400, 0
    for repetition in range(repetitions):
        p = rng.uniform(0.1, 0.85, size=(40, 1))
        a = RunTrials(Path("a"), results, _trials(rng.random((40, 3)) < p))
        b = RunTrials(Path("b"), results, _trials(rng.random((40, 3)) < p + 0.1))
        d = compare_pair(a, b, n_resamples=1000, random_state=repetition)["metrics"]["success_rate"]
        hits += d["ci_low"] <= 0.1 <= d["ci_high"]
    coverage = hits / repetitions
    print(f"\ncoverage[compare success_rate, paired BCa] = {coverage:.3f} ({repetitions} repetitions)")
    assert 0.93 <= coverage <= 0.97


def test_cli_writes_json_and_report_and_refuses_bad_input(tmp_path: Path) -> None:
    base = {(f"t{i}", s): (float(i % 2), 2) for i in range(4) for s in (0, 1)}
    a, b = _run(tmp_path / "a", base), _run(tmp_path / "b", base)
    cli = [sys.executable, "-m", "forge_eval._cli.main", "compare"]
    out = tmp_path / "cmp"
    done = subprocess.run(
        [*cli, str(a), str(b), "--out", str(out), "--step-budget", "1,2", "--resamples", "200"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert "success_rate" in done.stdout and "budget 1" in done.stdout
    html = (out / "compare.html").read_text()
    assert (
        "Step budgets" in html
        and "Per task" in html
        and "<svg" in html
        and "http" not in html.split("<svg")[0]
    )
    assert (
        json.loads((out / "compare.json").read_text())["comparisons"][0]["metrics"]["success_rate"][
            "estimate"
        ]
        == 0
    )
    other = _run(tmp_path / "other", base, benchmark="elsewhere")
    for args, message in (
        ([str(a)], "at least two run directories"),
        ([str(a), str(tmp_path / "missing")], "is not a run directory"),
        ([str(a), str(other)], "different benchmarks"),
        ([str(a), str(b), "--step-budget", "x"], "step-budget"),
    ):
        bad = subprocess.run([*cli, *args], capture_output=True, text=True)
        assert bad.returncode == 2 and message in bad.stderr and "Traceback" not in bad.stderr, (
            args,
            bad.stderr,
        )


def test_report_step_budget_adds_the_section(tmp_path: Path) -> None:
    run = _run(tmp_path / "a", {("t1", 0): (1.0, 1), ("t2", 0): (1.0, 3), ("t3", 0): (0.0, 2)})
    cli = [sys.executable, "-m", "forge_eval._cli.main", "report", str(run), "--step-budget", "1,3"]
    done = subprocess.run(cli, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "success at    1 model turns: 33.3%" in done.stdout
    assert "success at    3 model turns: 66.7%" in done.stdout
    html = (run / "report.html").read_text()
    assert 'id="step-budgets"' in html and "Model turns per trial: median 2.0" in html


def test_compare_averages_as_results_json_does_on_unbalanced_runs(tmp_path: Path) -> None:
    """Task t1 finished 3 seeds, t2 one: results.json weighs each task the same (task mean), and so must
    compare. A cell mean would read +75 points here; each run's own headline says 0% and 50%."""
    from forge_eval.analysis import summarize_trials

    cells = [("t1", 0), ("t1", 1), ("t1", 2), ("t2", 0)]
    a = _run(tmp_path / "a", {cell: (0.0, 1) for cell in cells})
    b = _run(tmp_path / "b", {cell: (1.0 if cell[0] == "t1" else 0.0, 1) for cell in cells})
    runs = [load_run(path) for path in (a, b)]
    headline = [summarize_trials(r.trials, epochs=1, graded=False)["success_rate"].estimate for r in runs]
    assert headline == [0.0, 0.5]
    d = compare_pair(*runs, n_resamples=200)["metrics"]["success_rate"]
    assert (d["baseline"], d["run"]) == (0.0, 0.5)
    assert d["estimate"] == pytest.approx(headline[1] - headline[0])
    estimator = compare_runs([a, b], behavior=False, n_resamples=200)["estimator"]
    assert "mean over tasks of per-task means over seeds" in estimator


def test_compare_warns_when_the_protocols_differ(tmp_path: Path) -> None:
    from forge_eval.rundir import ProtocolRecord, Value, element

    base = {(f"t{i}", 0): (float(i % 2), 1) for i in range(4)}
    paths = []
    for name, temperature in (("a", 0.0), ("b", 0.7)):
        path = _run(tmp_path / name, base)
        official, used = Value(value={"temperature": 0.0}), Value(value={"temperature": temperature})
        record = ProtocolRecord(elements=[element("agent_sampling", official, used)])
        results = json.loads((path / "results.json").read_text())
        results["protocol"] = record.model_dump(mode="json")
        (path / "results.json").write_text(json.dumps(results))
        paths.append(path)
    cli = [sys.executable, "-m", "forge_eval._cli.main", "compare", *map(str, paths), "--no-behavior"]
    out = tmp_path / "cmp"
    done = subprocess.run([*cli, "--out", str(out), "--resamples", "200"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    expected = (
        'protocols differ: agent sampling settings: baseline {"temperature":0.0}; run {"temperature":0.7}'
    )
    assert expected in done.stdout
    data = json.loads((out / "compare.json").read_text())
    assert data["comparisons"][0]["protocol_differences"] == [expected.removeprefix("protocols differ: ")]
    assert 'id="pair0-protocol"' in (out / "compare.html").read_text()
