"""`forge-eval report DIR` through the real entry point, in a subprocess."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.reports import _synthetic as syn


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "forge_eval._cli.main", "report", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_report_rebuilds_and_prints_the_path(tmp_path: Path) -> None:
    run_dir = syn.write_run(tmp_path / "r")
    done = _cli(str(run_dir))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str((run_dir / "report.html").resolve())
    assert (run_dir / "report.html").read_text().startswith("<!DOCTYPE html>")


def test_nonexistent_dir_is_a_usage_error(tmp_path: Path) -> None:
    done = _cli(str(tmp_path / "nope"))
    assert done.returncode == 2
    assert f"error: run directory {tmp_path / 'nope'} does not exist" in done.stderr
    assert "hint:" in done.stderr and "Traceback" not in done.stderr


def test_a_file_instead_of_a_dir_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("")
    done = _cli(str(tmp_path / "f"))
    assert done.returncode == 2 and "is not a directory" in done.stderr


def test_dir_without_results_is_an_error_with_a_hint(tmp_path: Path) -> None:
    done = _cli(str(tmp_path))
    assert done.returncode == 1
    assert f"error: no results.json in run directory {tmp_path}" in done.stderr
    assert "forge-eval run" in done.stderr and "Traceback" not in done.stderr


def test_missing_argument_is_reported_by_click() -> None:
    done = _cli()
    assert done.returncode == 2 and "Missing argument 'DIR'" in done.stderr
