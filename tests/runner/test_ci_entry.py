"""`.ci/run` passes `make test`'s exit status through; pytest's 5 (no tests collected) fails CI."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("status", [0, 1, 2, 5])
def test_ci_entry_fails_on_every_non_zero_make_status(tmp_path, status):
    (tmp_path / ".ci").mkdir()
    shutil.copy(ROOT / ".ci" / "run", tmp_path / ".ci" / "run")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    make = bin_dir / "make"  # stands in for `make test`: exits as pytest would
    make.write_text(f"#!/bin/sh\nexit {status}\n")
    make.chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    done = subprocess.run(
        ["bash", str(tmp_path / ".ci" / "run")], env=env, capture_output=True, text=True, timeout=30
    )
    assert done.returncode == status
    assert ("no tests collected" in done.stderr) == (status == 5)
