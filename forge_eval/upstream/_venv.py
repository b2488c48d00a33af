"""An isolated interpreter for upstream code whose requirements must never meet forge-eval's.

A benchmark whose code runs with upstream's own (often unpinned) requirements gets a virtualenv of its
own, built once from the requirement files of its pinned tree and rebuilt when they (or this interpreter's
version) change. forge-eval talks to code in it only through subprocesses, never by importing it.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from forge_eval._errors import ForgeError
from forge_eval._status import duration, status

_INSTALL_TIMEOUT_S = 1800


@dataclass(frozen=True)
class UpstreamVenv:
    """A benchmark's upstream venv: where it lives and which of the tree's requirement files it holds.

    Attributes:
        name: The benchmark (status lines, the venv's marker file).
        title: How errors name it (e.g. "Claw-Eval").
        path: The venv's folder.
        requirements: The tree's requirement files, installed as they are.
        env_var: The variable that points a run at a venv built elsewhere (named in errors).
    """

    name: str
    title: str
    path: Path
    requirements: tuple[str, ...]
    env_var: str

    @property
    def python(self) -> Path:
        return self.path / "bin" / "python"

    @property
    def _marker(self) -> Path:
        return self.path / f".forge-{self.name}-venv"

    def key(self, tree: Path) -> str:
        """What the venv is built from: upstream's requirement files and this interpreter's version."""
        digest = hashlib.sha256(f"{sys.version_info[:3]}\0".encode())
        for name in self.requirements:
            digest.update(name.encode() + b"\0" + (tree / name).read_bytes())
        return digest.hexdigest()

    def ready(self, tree: Path) -> bool:
        """Whether the venv is built from this tree's requirements (and finished)."""
        marker = self._marker
        return marker.is_file() and marker.read_text().strip() == self.key(tree) and self.python.exists()

    def ensure(self, tree: Path) -> Path:
        """The venv, built on first use (idempotent; one builder at a time): returns its python.

        Raises:
            ForgeError: pip could not install upstream's requirements (offline with no PyPI mirror, ...).
        """
        if self.ready(tree):
            return self.python
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path.parent / f"{self.path.name}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # another run may be building it: wait, then use its venv
            if self.ready(tree):
                return self.python
            started = time.monotonic()
            status(
                f"{self.name}: installing upstream's requirements into {self.path} (once; pip, a few minutes)"
            )
            shutil.rmtree(self.path, ignore_errors=True)
            requirements = [arg for name in self.requirements for arg in ("-r", str(tree / name))]
            steps = [
                [sys.executable, "-m", "venv", str(self.path)],
                [str(self.python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
                + requirements,
            ]
            for step in steps:
                done = subprocess.run(step, capture_output=True, text=True, timeout=_INSTALL_TIMEOUT_S)
                if done.returncode != 0:
                    shutil.rmtree(self.path, ignore_errors=True)
                    raise ForgeError(
                        f"could not build {self.title}'s own venv ({' '.join(step[:4])} ...): "
                        + (done.stderr.strip().splitlines() or ["no output"])[-1],
                        hint=f"it needs PyPI (pip) once; or build it where PyPI is reachable and set "
                        f"{self.env_var} to its folder",
                    )
            self._marker.write_text(self.key(tree) + "\n")
            status(f"{self.name}: upstream's venv ready ({duration(time.monotonic() - started)})")
        return self.python

    def base_interpreter(self) -> Path:
        """The installation the venv's python comes from (a sandbox running it must see it)."""
        return Path(os.path.realpath(self.python)).parents[1]
