"""The local sandbox: one harness process tree under bubblewrap, with limits, forwards and clean teardown.

`start_sandbox(spec)` runs `spec.argv` (see `sandboxed_command` for the confinement: an unprivileged
user of its own, a read-only system and `ro_binds`, one writable work directory, an empty `/tmp`, its own
PID / network / IPC / UTS / mount namespaces, no capabilities and a clean environment). The sandbox has no
network but its own loopback: each `forwards` entry makes a port on that loopback reach one host address,
through socat inside and a bind-mounted Unix socket served by `_bridge` outside, so a harness reaches the
proxy's data plane and nothing else (not the proxy's control port, not the host's other servers).
CPU / memory / pids limits come from a per-sandbox cgroup where the kernel allows, else from rlimits
(`Sandbox.limits_applied` says which). `stop()` and a missed deadline kill the whole tree: the PID
namespace dies with bubblewrap, and the cgroup is emptied before it is removed.

Example:
    sandbox = await start_sandbox(SandboxSpec(
        argv=["codex", "exec", ...], workdir=work, env={"OPENAI_BASE_URL": "http://127.0.0.1:18080/v1"},
        forwards={18080: "127.0.0.1:8400"}, ro_binds=[npm_prefix()], timeout_s=600))
    result = await sandbox.wait()        # status completed | timeout | harness_crash | oom | aborted
    await sandbox.stop()                 # idempotent; wait() has already cleaned up
"""

import asyncio
import contextlib
import logging
import os
import shutil
import signal
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from forge_eval.sandbox._cgroups import Mechanism
from forge_eval.sandbox._command import SandboxedCommand, prepare
from forge_eval.sandbox._spec import SandboxSpec

logger = logging.getLogger(__name__)

SandboxStatus = Literal["completed", "timeout", "harness_crash", "oom", "aborted"]
_TAIL_BYTES = 1 << 20
_REAP_S = 5.0  # how long bwrap may take to reap its namespace after its init is killed


@dataclass(frozen=True)
class SandboxResult:
    """How a sandboxed command ended.

    Attributes:
        status: completed (exit 0), harness_crash (non-zero exit), timeout (killed at the deadline),
            oom (the memory cap's OOM killer fired), aborted (stopped before it ended).
        exit_code: The command's exit status (128 + signal when killed), None when we killed it.
        stdout, stderr: The last MiB of each.
        duration_s: Wall time from start to exit.
        limits: Which mechanism enforced each limit ("cgroup-v1", "cgroup-v2", "rlimit", "none").
        sandboxed: False only for `no_sandbox=True` runs.
    """

    status: SandboxStatus
    exit_code: int | None
    stdout: str
    stderr: str
    duration_s: float
    limits: dict[str, Mechanism]
    sandboxed: bool = True


def _parents() -> dict[int, int]:
    """pid -> parent pid of every host process."""
    parents = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            parents[int(entry.name)] = int(stat.rpartition(")")[2].split()[1])
    return parents


def _children(pid: int) -> list[int]:
    return [child for child, parent in _parents().items() if parent == pid]


def _descendants(pid: int) -> list[int]:
    parents = _parents()
    found, frontier = [], [pid]
    while frontier:
        kids = [child for child, parent in parents.items() if parent in frontier]
        found += kids
        frontier = kids
    return found


def _tail(path: Path) -> str:
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - _TAIL_BYTES))
            return f.read().decode("utf-8", errors="replace")
    except OSError:
        return ""


class Sandbox:
    """A started sandbox. `wait()` for its end, `logs()` meanwhile, `stop()` to end it early.

    Attributes:
        id: Unique id, also in the sandbox's environment as FORGE_SANDBOX_ID (for leak checks).
        pid: The host pid of its outermost process.
        user: Who its processes run as (None: as this process's own, non-root user).
        limits_applied: Which mechanism enforces each limit.
    """

    def __init__(self, spec: SandboxSpec, command: SandboxedCommand, log_dir: Path, own_logs: bool) -> None:
        self.spec = spec
        self.id = command.id
        self.user = command.user
        self.sandboxed = command.sandboxed
        self.limits_applied = dict(command.limits_applied)
        self.started_at = time.time()
        self._command = command
        self._log_dir = log_dir
        self._own_logs = own_logs
        self._proc: asyncio.subprocess.Process | None = None
        self._killed_as: SandboxStatus | None = None
        self._result: SandboxResult | None = None
        self._finish_lock = asyncio.Lock()

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc else None

    @property
    def result(self) -> SandboxResult | None:
        """The result once the sandbox has ended and been cleaned up."""
        return self._result

    def logs(self) -> str:
        """stdout then stderr so far (last MiB of each)."""
        if self._result is not None:
            out, err = self._result.stdout, self._result.stderr
        else:
            out, err = _tail(self._log_dir / "stdout.log"), _tail(self._log_dir / "stderr.log")
        return out if not err else f"{out}\n--- stderr ---\n{err}" if out else err

    async def wait(self, deadline: float | None = None) -> SandboxResult:
        """Wait for the end, or until unix time `deadline` (default: start + timeout_s), then kill it
        (status `timeout`); cleans up either way."""
        if self._result is not None:
            return self._result
        assert self._proc is not None
        deadline = self.started_at + self.spec.timeout_s if deadline is None else deadline
        try:
            await asyncio.wait_for(asyncio.shield(self._proc.wait()), max(0.0, deadline - time.time()))
        except TimeoutError:
            await self._kill("timeout")
        return await self._finish()

    async def stop(self) -> SandboxResult:
        """Kill the whole process tree (status `aborted` if it was still running) and clean up.
        Idempotent; returns the result."""
        if self._result is None:
            await self._kill("aborted")
        return await self._finish()

    async def _kill(self, reason: SandboxStatus) -> None:
        proc = self._proc
        if proc is None or proc.returncode is not None:
            return
        self._killed_as = self._killed_as or reason
        # Killing the PID namespace's init (bwrap's child) makes the kernel kill every process in it, and
        # bwrap reports only once they are all reaped; killing bwrap itself would return before that.
        # Without a sandbox there is no namespace: every descendant is killed by pid.
        targets = _children(proc.pid) if self.sandboxed else _descendants(proc.pid)
        for pid in targets:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        if targets and self.sandboxed:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(proc.wait()), _REAP_S)
        if proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
        await self._command.kill_all()

    async def _finish(self) -> SandboxResult:
        async with self._finish_lock:
            if self._result is not None:
                return self._result
            assert self._proc is not None
            code = await self._proc.wait()
            ended = time.time()
            left = await self._command.kill_all()  # e.g. daemons of a no-sandbox run
            oom = self._command.oom_killed()
            await self._command.close()
            if left:
                logger.error("sandbox %s: processes %s survived SIGKILL", self.id, sorted(left))
            if self._killed_as is not None:
                status: SandboxStatus = self._killed_as
            elif oom and code != 0:
                status = "oom"
            else:
                status = "completed" if code == 0 else "harness_crash"
            self._result = SandboxResult(
                status=status,
                exit_code=None if self._killed_as else (128 - code if code < 0 else code),
                stdout=_tail(self._log_dir / "stdout.log"),
                stderr=_tail(self._log_dir / "stderr.log"),
                duration_s=ended - self.started_at,
                limits=self.limits_applied,
                sandboxed=self.sandboxed,
            )
            if self._own_logs:
                shutil.rmtree(self._log_dir, ignore_errors=True)
            return self._result

    async def __aenter__(self) -> "Sandbox":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()


async def start_sandbox(spec: SandboxSpec, *, no_sandbox: bool = False) -> Sandbox:
    """Start `spec` in a fresh sandbox and return at once.

    Args:
        spec: What to run and how it is confined.
        no_sandbox: Run directly on the host (no namespaces, no other user, no read-only root or network
            isolation; limits and forwards still apply). An escape hatch for debugging; logs a warning.

    Raises:
        ForgeError: bubblewrap, setpriv (or socat, with forwards) is missing, or a limit cannot be
            enforced as asked.
        UsageError: A malformed spec.
    """
    command = await prepare(spec, no_sandbox=no_sandbox)
    own_logs = spec.log_dir is None
    log_dir = Path(tempfile.mkdtemp(prefix="forge-sbx-logs-")) if spec.log_dir is None else spec.log_dir
    try:
        log_dir.mkdir(parents=True, exist_ok=True)
        if no_sandbox:
            logger.warning(
                "running %s WITHOUT a sandbox (--no-sandbox): it can read and write the host and reach "
                "its network",
                spec.argv[0],
            )
        sandbox = Sandbox(spec, command, log_dir, own_logs)
        with open(log_dir / "stdout.log", "ab") as out, open(log_dir / "stderr.log", "ab") as err:
            sandbox._proc = await asyncio.create_subprocess_exec(
                *command.argv,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                env=command.env,
                cwd=spec.cwd or spec.workdir,
                start_new_session=True,
            )
        sandbox.started_at = time.time()
        return sandbox
    except BaseException:
        await command.close()
        if own_logs:
            shutil.rmtree(log_dir, ignore_errors=True)
        raise
