"""`forge-eval run` end to end on real Inspect tasks against a recording OpenAI-compatible server."""

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

import tests.runner._probe_benchmark  # noqa: F401  (registers the "probe" benchmark)
from forge_eval._cli.main import cli
from forge_eval.runner import RunSpec, run_benchmark
from tests.runner._recording_server import recording_server


@pytest.fixture
def rec_model(monkeypatch):
    with recording_server() as (url, seen):
        monkeypatch.setenv("REC_API_KEY", "test")
        yield url, seen


def _spec(tmp_path, rec_model, **kw) -> RunSpec:
    base = {
        "benchmark": "probe",
        "seeds": (0, 1),
        "epochs": 2,
        "model": "openai-api/rec/m",
        "model_base_url": rec_model[0],
        "out": tmp_path,
    }
    return RunSpec(**{**base, **kw})


def test_run_writes_logs_results_trials_and_report(tmp_path, rec_model):
    result = run_benchmark(_spec(tmp_path, rec_model, command="forge-eval run probe"), display="none")
    results = json.loads((tmp_path / "results.json").read_text())
    assert results["status"] == "complete" and result.complete
    assert results["seeds"] == [0, 1] and results["epochs"] == 2 and results["n_tasks"] == 3
    assert results["command"] == "forge-eval run probe"
    assert {"python", "inspect_ai", "forge_eval"} <= set(results["versions"])
    # the recording server answers "42": two of three tasks pass in every trial
    success = results["metrics"]["success_rate"]
    assert success["estimate"] == pytest.approx(2 / 3)
    assert success["ci_low"] <= success["estimate"] <= success["ci_high"]
    assert [p["seed"] for p in success["per_seed"]] == [0, 1]
    assert success["n_trials"] == 12 and success["n_tasks"] == 3
    assert {"pass@2", "pass^2"} <= set(results["metrics"])
    trials = pd.read_csv(tmp_path / "trials.csv")
    assert len(trials) == 3 * 2 * 2
    assert set(trials["difficulty"]) == {"easy", "hard"}
    assert len(list((tmp_path / "logs").glob("*.eval"))) == 2
    assert (tmp_path / "report.html").stat().st_size > 1000
    assert len(rec_model[1]) == 12  # one model call per trial


def test_rerun_resumes_without_redoing_finished_work(tmp_path, rec_model):
    run_benchmark(_spec(tmp_path, rec_model), display="none")
    calls = len(rec_model[1])
    run_benchmark(_spec(tmp_path, rec_model), display="none")
    assert len(rec_model[1]) == calls


def test_an_interrupted_run_is_partial_and_resuming_finishes_only_what_is_missing(tmp_path, monkeypatch):
    monkeypatch.setenv("REC_API_KEY", "test")
    failing = ["Say 42."]  # the "forty-two" task fails until the test lifts the failure
    with recording_server(failing) as (url, seen):
        first = run_benchmark(_spec(tmp_path, (url, seen)), display="none")
        assert first.results["status"] == "partial"
        trials = pd.read_csv(tmp_path / "trials.csv")
        errored = trials[trials["error"].notna()]
        # the failing sample errors; Inspect may cancel others of its task, which then error too
        assert "forty-two" in set(errored["task_id"])
        assert not trials[trials["error"].isna()]["task_id"].eq("forty-two").any()
        finished = len(seen)
        failing.clear()
        second = run_benchmark(_spec(tmp_path, (url, seen)), display="none")
    assert second.results["status"] == "complete"
    # only the errored trials ran again (one model call each); finished ones were kept
    assert len(seen) - finished == len(errored)
    assert pd.read_csv(tmp_path / "trials.csv")["error"].isna().all()
    assert second.results["metrics"]["success_rate"]["estimate"] == pytest.approx(2 / 3)


def test_a_different_run_in_the_same_directory_is_refused(tmp_path, rec_model):
    run_benchmark(_spec(tmp_path, rec_model, quick=True), display="none")
    result = CliRunner().invoke(
        cli,
        [
            "run",
            "probe",
            "--seeds",
            "2",
            "--epochs",
            "2",
            "--model",
            "openai-api/rec/m",
            "--model-base-url",
            rec_model[0],
            "--out",
            str(tmp_path),
        ],
        standalone_mode=False,
        catch_exceptions=True,
    )
    assert "already holds a different run" in str(result.exception)
    assert "quick" in str(result.exception)
    assert json.loads((tmp_path / "results.json").read_text())["n_tasks"] == 1


def test_unknown_benchmark_and_harness_list_valid_names():
    from forge_eval._errors import UnknownNameError

    for args, kind in ((["run", "nope"], "benchmark"), (["run", "probe", "--harness", "nope"], "harness")):
        result = CliRunner().invoke(cli, args, standalone_mode=False)
        assert isinstance(result.exception, UnknownNameError)
        assert result.exception.exit_code == 2
        assert f"unknown {kind} 'nope'" in str(result.exception)
        assert "react" in str(result.exception) or "probe" in str(result.exception)


def test_cli_usage_errors_are_messages_with_exit_2():
    forge = Path(sys.executable).with_name("forge-eval")
    done = subprocess.run([str(forge), "run", "nope"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert "unknown benchmark 'nope'" in done.stderr and "forgelab" in done.stderr
    assert "Traceback" not in done.stderr
