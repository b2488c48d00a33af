"""Running a harness binary for one sample: in the local sandbox, or (`--no-sandbox`) as a host process.

Either way the process tree is gone when this returns, also when the sample is cancelled (its time limit)
or the deadline passes.
"""

import asyncio
import contextlib
import os
import signal
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Workspace:
    """One sample's private directories (the same paths inside the sandbox).

    Attributes:
        root: Holds the others; deleted after the sample.
        work: The harness's working directory (the agent's workspace).
        home: `HOME` (and the harness's config/state dirs under it).
        tmp: `TMPDIR`; not an ancestor of `home` (Codex refuses helper binaries under a temp dir).
        bin: Commands the agent may run (`forge-tool`), first on `PATH`.
    """

    root: Path

    @property
    def work(self) -> Path:
        return self.root / "work"

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def tmp(self) -> Path:
        return self.root / "tmp"

    @property
    def bin(self) -> Path:
        return self.root / "bin"

    def create(self) -> "Workspace":
        for path in (self.work, self.home, self.tmp, self.bin):
            path.mkdir(parents=True, exist_ok=True)
        return self


@dataclass(frozen=True)
class Finished:
    """How the harness process ended."""

    exit_code: int | None
    stdout: str
    stderr: str
    timed_out: bool = False


async def run_on_host(argv: list[str], env: dict[str, str], cwd: Path, timeout_s: float) -> Finished:
    """Run `argv` as a plain host process in its own session; the whole group is killed on exit."""
    process = await asyncio.create_subprocess_exec(
        *argv,
        cwd=cwd,
        env=env,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,
    )
    try:
        stdout, stderr = await asyncio.wait_for(process.communicate(), timeout_s)
    except TimeoutError:
        _kill_group(process.pid)
        stdout, stderr = await process.communicate()
        return Finished(None, stdout.decode(errors="replace"), stderr.decode(errors="replace"), True)
    finally:
        _kill_group(process.pid)  # also on cancellation; children the harness left behind
        if process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                await process.wait()
    return Finished(process.returncode, stdout.decode(errors="replace"), stderr.decode(errors="replace"))


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
