"""Upstream's claw-eval at the pinned commit: its tree, and the isolated interpreter its code runs in.

Every piece of Claw-Eval that decides what the model sees or how it is scored (runner loop, system
prompt, provider, mock services, sandbox server, simulated user, graders, LLM judge, task score) is
upstream's own code, read at run time from the pinned tree (`--data-dir`, else the archive
`benchmarks/_acquire.py` downloads). It runs in a virtualenv of its own, so upstream's unpinned
requirements never meet forge-eval's: the venv holds the packages of upstream's two requirement files
(`requirements.txt`, `requirements-sandbox-server.txt`), and `claw_eval` itself is imported from the tree
(`PYTHONPATH=<tree>/src`), because its graders find `tasks/` relative to their own file. forge-eval talks
to that code only through subprocesses (`_driver/`), never by importing it.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from forge_eval._errors import ForgeError
from forge_eval._status import duration, status
from forge_eval.benchmarks._acquire import DataSource, cache_root, locate_data

REPO = "claw-eval/claw-eval"
COMMIT = "9365e1a96ec084a5c8820cdf438e7fb4e1a83b90"
SOURCE = DataSource(
    benchmark="claweval",
    repo=REPO,
    revision=COMMIT,
    # the whole tree, not only the task data: its code runs the benchmark
    marker="src/claw_eval/runner/loop.py",
    subdirs=("claw-eval+claw-eval@9365e1a", "claw-eval"),
    task_of=r"tasks/(?P<task>[^/]+)/",
)
#: The key upstream's live-web services (`mock_services/web_real*`) read from their environment, as its
#: README says to export it; the trial's driver hands it to them (never to the agent's sandbox).
SERP_KEY = "SERP_DEV_KEY"
#: Upstream's requirement files, installed into the venv as they are.
REQUIREMENTS = ("requirements.txt", "requirements-sandbox-server.txt")
_MARKER = ".forge-claweval-venv"
_INSTALL_TIMEOUT_S = 1800


def upstream_tree(data_dir: Path | str | None = None) -> Path:
    """The pinned upstream tree: `--data-dir` (the tree or a folder holding it), the cache, or a download."""
    return locate_data(SOURCE, data_dir)


def venv_dir() -> Path:
    """Where upstream's venv lives: `$FORGE_CLAWEVAL_VENV`, else `<forge cache>/claweval/venv`."""
    given = os.environ.get("FORGE_CLAWEVAL_VENV")
    return Path(given).resolve() if given else cache_root().parent / "claweval" / "venv"


def venv_python(venv: Path | None = None) -> Path:
    return (venv or venv_dir()) / "bin" / "python"


def venv_key(tree: Path) -> str:
    """What the venv is built from: upstream's requirement files and this interpreter's version."""
    digest = hashlib.sha256(f"{sys.version_info[:3]}\0".encode())
    for name in REQUIREMENTS:
        digest.update(name.encode() + b"\0" + (tree / name).read_bytes())
    return digest.hexdigest()


def venv_ready(tree: Path, venv: Path | None = None) -> bool:
    """Whether the venv is built from this tree's requirements (and finished)."""
    venv = venv or venv_dir()
    marker = venv / _MARKER
    return marker.is_file() and marker.read_text().strip() == venv_key(tree) and venv_python(venv).exists()


def ensure_venv(tree: Path, venv: Path | None = None) -> Path:
    """Upstream's venv, built on first use (idempotent; one builder at a time): returns its python.

    Raises:
        ForgeError: pip could not install upstream's requirements (offline with no PyPI mirror, ...).
    """
    venv = venv or venv_dir()
    if venv_ready(tree, venv):
        return venv_python(venv)
    venv.parent.mkdir(parents=True, exist_ok=True)
    with open(venv.parent / f"{venv.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another run may be building it: wait, then use its venv
        if venv_ready(tree, venv):
            return venv_python(venv)
        started = time.monotonic()
        status(f"claweval: installing upstream's requirements into {venv} (once; pip, a few minutes)")
        shutil.rmtree(venv, ignore_errors=True)
        requirements = [arg for name in REQUIREMENTS for arg in ("-r", str(tree / name))]
        steps = [
            [sys.executable, "-m", "venv", str(venv)],
            [str(venv_python(venv)), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
             *requirements],
        ]
        for step in steps:
            done = subprocess.run(step, capture_output=True, text=True, timeout=_INSTALL_TIMEOUT_S)
            if done.returncode != 0:
                shutil.rmtree(venv, ignore_errors=True)
                raise ForgeError(
                    f"could not build Claw-Eval's own venv ({' '.join(step[:4])} ...): "
                    + (done.stderr.strip().splitlines() or ["no output"])[-1],
                    hint="it needs PyPI (pip) once; or build it where PyPI is reachable and set "
                    "FORGE_CLAWEVAL_VENV to its folder",
                )
        (venv / _MARKER).write_text(venv_key(tree) + "\n")
        status(f"claweval: upstream's venv ready ({duration(time.monotonic() - started)})")
    return venv_python(venv)


def base_interpreter(venv: Path | None = None) -> Path:
    """The installation the venv's python comes from (a sandbox running it must see it)."""
    return Path(os.path.realpath(venv_python(venv))).parents[1]


def installed_versions(venv: Path | None = None) -> dict[str, str]:
    """The venv's packages and versions (`pip freeze`), for the protocol record's environment."""
    done = subprocess.run(
        [str(venv_python(venv)), "-m", "pip", "freeze", "--disable-pip-version-check"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    pairs = (line.split("==", 1) for line in done.stdout.splitlines() if "==" in line)
    return {name: version for name, version in pairs}
