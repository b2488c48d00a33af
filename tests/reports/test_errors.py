"""Bad run directories give messages that say what is wrong and which command fixes it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from forge_eval import ForgeError
from forge_eval.reports import SectionRegistry, build_report
from tests.reports import _synthetic as syn

EMPTY = SectionRegistry(group="forge_eval.tests.none")


def _fails(run_dir: Path) -> ForgeError:
    with pytest.raises(ForgeError) as info:
        build_report(run_dir, sections=EMPTY)
    assert not (run_dir / "report.html").exists()
    return info.value


def test_missing_results_json_names_the_file_and_the_command(tmp_path: Path) -> None:
    error = _fails(tmp_path)
    assert error.message == f"no results.json in run directory {tmp_path}"
    assert "forge-eval run" in (error.hint or "")


def test_results_json_that_is_not_json(tmp_path: Path) -> None:
    (tmp_path / "results.json").write_text('{"benchmark": "x",')
    error = _fails(tmp_path)
    assert "is not valid JSON" in error.message and "line 1" in error.message


def test_every_problem_in_results_json_is_listed_at_once(tmp_path: Path) -> None:
    data = syn.results(seeds="3", status="running")
    del data["model"]
    data["metrics"] = {
        "success_rate": {**syn.METRICS["success_rate"], "estimate": 1.7},
        "pass@2": {**syn.METRICS["pass@2"], "n_trials": "many"},
    }
    del data["metrics"]["pass@2"]["ci_high"]
    syn.write_run(tmp_path, data)
    message = _fails(tmp_path).message
    assert "'model' is missing" in message
    assert "'seeds' must be a list of integers, got \"3\"" in message
    assert "'status' must be \"complete\" or \"partial\", got 'running'" in message
    assert "'metrics.success_rate.estimate' = 1.7 is outside [0, 1]" in message
    assert "'metrics.pass@2.ci_high' is missing" in message
    assert "'metrics.pass@2.n_trials' must be an integer" in message


def test_results_json_must_be_an_object(tmp_path: Path) -> None:
    (tmp_path / "results.json").write_text(json.dumps([1, 2]))
    assert "must hold a JSON object, got list" in _fails(tmp_path).message


def test_trials_csv_without_required_columns(tmp_path: Path) -> None:
    rows = [{k: v for k, v in row.items() if k not in ("passed", "error")} for row in syn.trial_rows()]
    syn.write_run(tmp_path, rows=rows)
    error = _fails(tmp_path)
    assert error.message.endswith("trials.csv lacks the column(s) passed, error")
    assert "forge-eval run" in (error.hint or "")


def test_trials_csv_bad_values_point_at_the_line(tmp_path: Path) -> None:
    rows = syn.trial_rows()
    rows[2]["passed"] = "maybe"
    rows[4]["seed"] = "eleven"
    rows[5]["score"] = "high"
    rows[6]["score"] = "nan"  # accepted: no score
    syn.write_run(tmp_path, rows=rows)
    message = _fails(tmp_path).message
    assert "'passed' must be true or false (row(s) [4]: 'maybe')" in message
    assert "'seed' must be an integer (row(s) [6]: 'eleven')" in message
    assert "'score' must be a number or empty (row(s) [7]: 'high')" in message
    assert "row(s) [8]" not in message


def test_unwritable_run_dir(tmp_path: Path) -> None:
    run_dir = syn.write_run(tmp_path / "r")
    (run_dir / "report.html").mkdir()  # a directory where the file should go: fails even as root
    error = _fails_writing(run_dir)
    assert error.message.startswith(f"cannot write {run_dir / 'report.html'}")
    assert "writable" in (error.hint or "")
    assert [p.name for p in run_dir.iterdir() if p.name.startswith(".")] == []


def _fails_writing(run_dir: Path) -> ForgeError:
    with pytest.raises(ForgeError) as info:
        build_report(run_dir, sections=EMPTY)
    return info.value
