"""Running the real harness binaries in tests: a thin layer over `forge_eval.harnesses`, which holds the
command lines, configs and pins (scripts/setup.d/30-harnesses.sh installs them into the npm cache)."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from forge_eval.harnesses import npm_prefix
from forge_eval.harnesses._claude_code import claude_args as _claude_args
from forge_eval.harnesses._codex import codex_args
from forge_eval.harnesses._npm import node24_bin
from forge_eval.harnesses._openclaw import openclaw_args, openclaw_config

NPM_PREFIX = npm_prefix()
NPM_BIN = NPM_PREFIX / "node_modules" / ".bin"
NODE24_BIN = node24_bin(NPM_PREFIX)
TASK = "create hello.txt containing hi"

__all__ = ["NODE24_BIN", "NPM_BIN", "TASK", "binary", "claude_args", "codex_args", "isolated_env"]
__all__ += ["openclaw_args", "openclaw_config", "run_harness"]


def binary(name: str) -> Path:
    """The harness binary, or a skip naming the setup script that installs it."""
    found = NPM_BIN / name if (NPM_BIN / name).exists() else shutil.which(name)
    if not found:
        pytest.skip(f"{name} is not installed: run `bash scripts/setup.d/30-harnesses.sh` (CI does)")
    return Path(found)


def isolated_env(run: Path, **extra: str) -> dict[str, str]:
    """A private HOME and temp dir per run, so harness runs never share state."""
    home, tmp = run / "home", run / "tmp"
    home.mkdir(parents=True, exist_ok=True)
    tmp.mkdir(parents=True, exist_ok=True)
    path = f"{NODE24_BIN}:{NPM_BIN}:{os.environ.get('PATH', '/usr/bin:/bin')}"
    return {"PATH": path, "HOME": str(home), "TMPDIR": str(tmp), "LANG": "C.UTF-8", **extra}


def claude_env(run: Path, base_url: str, key: str, **extra: str) -> dict[str, str]:
    """Claude Code's environment in `run`'s private home, talking to `base_url` with `key`."""
    urls = {"ANTHROPIC_BASE_URL": base_url, "ANTHROPIC_API_KEY": key}
    return isolated_env(run, CLAUDE_CONFIG_DIR=str(run / "home" / ".claude"), **urls, **extra)


def run_harness(
    argv: list[str], cwd: Path, env: dict[str, str], timeout: float
) -> subprocess.CompletedProcess:
    return subprocess.run(
        argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout
    )


def claude_args(prompt: str = TASK, model: str = "forge-policy") -> list[str]:
    """Claude Code with only Bash allowed (no IS_SANDBOX needed when the tests run as root)."""
    return _claude_args(prompt, model, allowed_tools=["Bash"])
