"""The one JSON writer (atomic, NaN-safe), RunDir's names and reader, trials.csv's one reader and writer."""

import json
import math
import os
import stat
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from pydantic import BaseModel

from forge_eval import ForgeError, _files
from forge_eval.rundir import (
    TRIAL_COLUMNS,
    RunDir,
    metadata_columns,
    read_trials,
    write_json,
    write_text,
    write_trials,
)


class _Point(BaseModel):
    x: float


def test_write_json_is_standard_json_without_nan_and_reads_numpy_and_models(tmp_path: Path) -> None:
    data = {
        "nan": math.nan,
        "inf": [math.inf, -math.inf],
        "numpy": (np.float64(0.25), np.int64(3), np.bool_(True), np.array([1.5, np.nan])),
        "model": _Point(x=math.nan),
        "path": tmp_path,
    }
    text = write_json(tmp_path / "a.json", data).read_text()
    # Python's own reader accepts NaN; a strict one must as well: parse_constant refuses NaN/Infinity
    loaded = json.loads(text, parse_constant=lambda c: pytest.fail(f"non-standard JSON constant {c}"))
    assert loaded == {
        "nan": None,
        "inf": [None, None],
        "numpy": [0.25, 3, True, [1.5, None]],
        "model": {"x": None},
        "path": str(tmp_path),
    }


def test_a_failed_write_keeps_the_old_file_and_leaves_no_temporary_file(tmp_path: Path, monkeypatch) -> None:
    target = tmp_path / "results.json"
    write_json(target, {"v": 1})
    with pytest.raises(TypeError, match="object cannot be written as JSON"):
        write_json(target, {"v": object()})

    def full_disk(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(_files.os, "replace", full_disk)
    with pytest.raises(OSError, match="No space left"):
        write_json(target, {"v": 2})
    monkeypatch.undo()
    assert json.loads(target.read_text()) == {"v": 1}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.json"]


def test_write_text_sets_the_mode_of_a_new_file(tmp_path: Path) -> None:
    private = write_text(tmp_path / "rollout.json", b"{}", mode=0o600, sync=True)
    assert stat.S_IMODE(private.stat().st_mode) == 0o600 and private.read_bytes() == b"{}"
    umask = os.umask(0)
    os.umask(umask)
    shared = write_text(tmp_path / "report.html", "<p>")
    assert stat.S_IMODE(shared.stat().st_mode) == 0o666 & ~umask


def test_run_dir_names_every_file(tmp_path: Path) -> None:
    files = RunDir(str(tmp_path))
    named = {
        files.results: "results.json",
        files.trials: "trials.csv",
        files.run_marker: "run.json",
        files.report: "report.html",
        files.behavior: "behavior.json",
        files.budgets: "budgets.json",
        files.logs: "logs",
        files.records: "records",
        files.compare: "compare.json",
        files.compare_report: "compare.html",
    }
    assert all(path == tmp_path / name for path, name in named.items())
    assert os.fspath(files) == str(tmp_path)


def test_read_json_parses_a_file_of_the_run_and_is_none_for_an_absent_one(tmp_path: Path) -> None:
    files = RunDir(tmp_path)
    assert files.read_json(RunDir.BUDGETS) is None
    write_json(files.budgets, {"budgets": [1, math.nan]})
    assert files.read_json(RunDir.BUDGETS) == {"budgets": [1, None]}


def _table() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "task_id": ["007", "b"],
            "seed": [0, 1],
            "epoch": [1, 1],
            "score": [1.0, math.nan],
            "passed": [True, False],
            "error": ["", "boom, \"quoted\"\nsecond line"],
            "model_turns": [3, 0],
            "log_file": ["x.eval", "y.eval"],
            "difficulty": ["easy", "hard"],
        }
    )


def test_trials_round_trip_through_the_one_writer_and_reader(tmp_path: Path) -> None:
    path = write_trials(RunDir(tmp_path).trials, _table())
    header = path.read_text().splitlines()[0].split(",")
    assert header == [*TRIAL_COLUMNS, "difficulty"]  # the in-memory log file name is not written
    back = read_trials(path)
    assert back["task_id"].tolist() == ["007", "b"]  # ids stay text
    assert back["seed"].tolist() == [0, 1] and back["passed"].tolist() == [True, False]
    assert back["score"].iloc[0] == 1.0 and math.isnan(back["score"].iloc[1])
    assert back["model_turns"].tolist() == [3, 0] and str(back["model_turns"].dtype) == "Int64"
    assert back["error"].iloc[1] == 'boom, "quoted"\nsecond line'
    assert metadata_columns(back) == ("difficulty",)  # model_turns is a trial column, not metadata


def test_reader_accepts_files_without_model_turns_and_refuses_bad_counts(tmp_path: Path) -> None:
    old = tmp_path / "old.csv"
    old.write_text("task_id,seed,epoch,score,passed,error\na,0,1,1.0,true,\n")
    assert "model_turns" not in read_trials(old).columns
    unknown = tmp_path / "unknown.csv"
    unknown.write_text("task_id,seed,epoch,score,passed,error,model_turns\na,0,1,1.0,true,,\n")
    assert read_trials(unknown)["model_turns"].isna().all()
    bad = tmp_path / "bad.csv"
    bad.write_text("task_id,seed,epoch,score,passed,error,model_turns\na,0,1,1.0,true,,-2\nb,0,1,,false,,x\n")
    with pytest.raises(ForgeError, match=r"'model_turns' must be a count or empty \(row\(s\) \[2, 3\]"):
        read_trials(bad)
