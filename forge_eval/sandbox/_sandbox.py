"""The local sandbox: one harness process tree under bubblewrap, with limits, forwards and clean teardown.

`start_sandbox(spec)` runs `spec.argv` with a read-only system (`/usr`, `/etc`, and the `ro_binds` the
caller names), one writable directory (`spec.workdir`, bound at the same path), an empty `/tmp`, its own
PID / network / IPC / UTS / mount namespaces, no capabilities and a clean environment. The sandbox has no
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
import shlex
import shutil
import signal
import sys
import tempfile
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from forge_eval._errors import ForgeError, UsageError
from forge_eval.sandbox import _cgroups
from forge_eval.sandbox._bridge import Bridge, parse_target
from forge_eval.sandbox._cgroups import Enforce, Mechanism

logger = logging.getLogger(__name__)

SandboxStatus = Literal["completed", "timeout", "harness_crash", "oom", "aborted"]
SETUP_HINT = "run `bash scripts/setup.d/35-sandbox.sh` as root (it installs bubblewrap and socat from Debian)"
_INNER = "/run/forge"  # where the sandbox sees its private state (bootstrap script, forward sockets)
_TAIL_BYTES = 1 << 20
_REAP_S = 5.0  # how long bwrap may take to reap its namespace after its init is killed
_SYSTEM_DIRS = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")
_HIDDEN_FILES = ("/etc/shadow", "/etc/gshadow", "/etc/shadow-", "/etc/gshadow-")
_BASE_PATH = "/usr/local/bin:/usr/bin:/bin"


@dataclass(frozen=True)
class SandboxLimits:
    """Resource caps of one sandbox (the paper's pods: 2 CPU / 2 GB).

    Attributes:
        cpus: CPU time share, in cores (a CFS quota; fractions allowed).
        memory_mb: Memory cap; the kernel's OOM killer ends the rollout past it (status `oom`).
        pids: Most processes and threads at once (fork bombs, runaway shells).
        enforce: `auto` (cgroup where the kernel lets us, else rlimits), `cgroup` (fail without one), or
            `rlimit` (memory only; no CPU or pids cap).
    """

    cpus: float = 2.0
    memory_mb: int = 2048
    pids: int = 512
    enforce: Enforce = "auto"


@dataclass(frozen=True)
class SandboxSpec:
    """What to run in one sandbox.

    Attributes:
        argv: The command, resolved inside the sandbox (PATH is /usr/local/bin:/usr/bin:/bin unless
            `env` sets it; give absolute paths for tools under `ro_binds`).
        workdir: Existing host directory, bound read-write at the same path; the default cwd and HOME.
        env: Environment of the command; nothing of the host's environment is inherited.
        forwards: Port on the sandbox's own 127.0.0.1 -> host target ("127.0.0.1:8400" or a Unix socket
            path). Only these are reachable; each needs socat in the sandbox.
        ro_binds: Extra host paths made visible read-only at the same path (npm prefix, a virtualenv;
            see `python_ro_binds()`).
        limits: CPU / memory / pids caps.
        timeout_s: Default budget of `wait()`, from the start.
        log_dir: Where stdout.log / stderr.log are kept (they outlive the sandbox); default a private
            temporary directory removed at cleanup (the tails stay in the result).
        hostname: The sandbox's hostname.
        cwd: Working directory of the command, inside `workdir` (default `workdir`).
    """

    argv: Sequence[str]
    workdir: Path
    env: Mapping[str, str] = field(default_factory=dict)
    forwards: Mapping[int, str] = field(default_factory=dict)
    ro_binds: Sequence[Path] = ()
    limits: SandboxLimits = field(default_factory=SandboxLimits)
    timeout_s: float = 1800.0
    log_dir: Path | None = None
    hostname: str = "forge-sbx"
    cwd: Path | None = None


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


def python_ro_binds() -> list[Path]:
    """Host paths a sandbox needs to run this Python: the virtualenv, its base interpreter, and the
    checkout of an editable forge-eval install."""
    import forge_eval

    paths = {Path(sys.prefix).resolve(), Path(sys.base_prefix).resolve()}
    package = Path(forge_eval.__file__).resolve().parent.parent
    if not package.is_relative_to(Path(sys.prefix).resolve()):
        paths.add(package)
    return sorted(paths)


def _require(binary: str, why: str) -> str:
    path = shutil.which(binary)
    if path is None:
        raise ForgeError(f"{binary} is not installed; the local sandbox needs it {why}", hint=SETUP_HINT)
    return path


def _check(spec: SandboxSpec) -> None:
    if not spec.argv:
        raise UsageError("the sandbox command (argv) is empty", hint="give the harness command to run")
    if not spec.workdir.is_dir():
        raise UsageError(
            f"sandbox work directory {spec.workdir} does not exist or is not a directory",
            hint="create it first; it is the only writable place in the sandbox",
        )
    if spec.cwd is not None and not Path(spec.cwd).resolve().is_relative_to(spec.workdir.resolve()):
        raise UsageError(
            f"sandbox cwd {spec.cwd} is outside its work directory {spec.workdir}",
            hint="the work directory is the only writable place; give a cwd inside it",
        )
    for path in spec.ro_binds:
        if not Path(path).exists():
            raise UsageError(f"sandbox read-only bind {path} does not exist", hint="fix or drop the path")
    for port in spec.forwards:
        if not 0 < int(port) < 65536:
            raise UsageError(f"sandbox forward port {port} is not a TCP port", hint="use 1..65535")
    limits = spec.limits
    if limits.cpus <= 0 or limits.memory_mb <= 0 or limits.pids <= 0:
        raise UsageError(f"sandbox limits must be positive, got {limits}", hint="e.g. SandboxLimits(2, 2048)")


def _system_binds() -> list[str]:
    args = ["--ro-bind", "/usr", "/usr", "--ro-bind", "/etc", "/etc"]
    for name in _SYSTEM_DIRS:
        path = Path("/") / name
        if path.is_symlink():
            args += ["--symlink", os.readlink(path), str(path)]
        elif path.is_dir():
            args += ["--ro-bind", str(path), str(path)]
    for hidden in _HIDDEN_FILES:
        if Path(hidden).exists():
            args += ["--ro-bind", "/dev/null", hidden]
    return args


def _inner_script(forwards: Sequence[int], socat: str) -> str:
    """The sandbox's first process: start the forward listeners, wait until they listen, exec the command
    (so the command's exit status is the sandbox's)."""
    lines = ["#!/bin/sh"]
    for port in forwards:
        lines.append(
            f"{socat} TCP-LISTEN:{port},bind=127.0.0.1,fork,reuseaddr UNIX-CONNECT:{_INNER}/fwd-{port}.sock &"
        )
    if forwards:
        # /proc/net/tcp lists listening sockets as ":PORT(hex) 00000000:0000 0A"
        checks = " && ".join(f"grep -q ':{port:04X} 00000000:0000 0A' /proc/net/tcp" for port in forwards)
        lines += [
            "i=0",
            f"until {checks}; do",
            '  i=$((i+1)); if [ "$i" -gt 2000 ]; then',
            '    echo "forge sandbox: the port forwards did not start listening" >&2; exit 125',
            "  fi",
            "  sleep 0.01",
            "done",
        ]
    lines.append('exec "$@"')
    return "\n".join(lines) + "\n"


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
        limits_applied: Which mechanism enforces each limit.
    """

    def __init__(
        self,
        spec: SandboxSpec,
        sandbox_id: str,
        state: Path,
        log_dir: Path,
        cgroup: _cgroups.CgroupSet,
        bridges: list[Bridge],
        sandboxed: bool,
    ) -> None:
        self.spec = spec
        self.id = sandbox_id
        self.sandboxed = sandboxed
        self.limits_applied = dict(cgroup.applied)
        self.started_at = time.time()
        self._state = state
        self._log_dir = log_dir
        self._cgroup = cgroup
        self._bridges = bridges
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
        await asyncio.to_thread(self._cgroup.kill_all)

    async def _finish(self) -> SandboxResult:
        async with self._finish_lock:
            if self._result is not None:
                return self._result
            assert self._proc is not None
            code = await self._proc.wait()
            ended = time.time()
            left = await asyncio.to_thread(self._cgroup.kill_all)  # e.g. daemons of a no-sandbox run
            oom = self._cgroup.oom_killed()
            self._cgroup.remove()
            for bridge in self._bridges:
                await bridge.close()
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
            shutil.rmtree(self._state, ignore_errors=True)
            return self._result

    async def __aenter__(self) -> "Sandbox":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()


def _bwrap_argv(spec: SandboxSpec, bwrap: str, state_inner: Path) -> list[str]:
    workdir = spec.workdir.resolve()
    binds = [(Path(p).resolve(), "--ro-bind") for p in spec.ro_binds] + [(workdir, "--bind")]
    binds.sort(key=lambda b: len(b[0].parts))  # parents before children; the workdir wins over its parent
    argv = [bwrap, "--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL"]
    argv += ["--hostname", spec.hostname, *_system_binds()]
    argv += ["--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--tmpfs", "/run"]
    for path, mode in binds:
        argv += [mode, str(path), str(path)]
    cwd = Path(spec.cwd).resolve() if spec.cwd is not None else workdir
    argv += ["--ro-bind", str(state_inner), _INNER, "--chdir", str(cwd)]
    return [*argv, "--", "/bin/sh", f"{_INNER}/inner.sh", *spec.argv]


def _join_limits(cgroup: _cgroups.CgroupSet, limits: SandboxLimits) -> list[str]:
    """A /bin/sh prefix that puts itself into the cgroup (or sets the rlimit) before exec'ing the rest, so
    no process of the sandbox ever runs outside its limits."""
    steps = [f"echo $$ > {shlex.quote(str(p))}" for p in cgroup.procs_files]
    if cgroup.applied.get("memory") == "rlimit":
        steps.append(f"ulimit -d {limits.memory_mb * 1024}")
    return ["/bin/sh", "-c", " && ".join([*steps, 'exec "$@"']), "forge-sandbox"]


async def start_sandbox(spec: SandboxSpec, *, no_sandbox: bool = False) -> Sandbox:
    """Start `spec` in a fresh sandbox and return at once.

    Args:
        spec: What to run and how it is confined.
        no_sandbox: Run directly on the host (no namespaces, read-only root or network isolation; limits
            and forwards still apply). An escape hatch for debugging; logs a warning.

    Raises:
        ForgeError: bubblewrap (or socat, with forwards) is missing, or a limit cannot be enforced as asked.
        UsageError: A malformed spec.
    """
    _check(spec)
    bwrap = None if no_sandbox else _require("bwrap", "(Debian package bubblewrap)")
    socat = _require("socat", "to forward ports into it") if spec.forwards and not no_sandbox else ""
    limits = spec.limits
    cgroup = _cgroups.create(limits.cpus, limits.memory_mb, limits.pids, limits.enforce)
    if limits.enforce == "cgroup" and cgroup.version is None:
        raise ForgeError(
            "the sandbox limits were asked to be enforced by a cgroup, but no writable cgroup (v1 or v2 with "
            "the memory, pids and cpu controllers) is available here",
            hint="run as root on a host with writable /sys/fs/cgroup, or use SandboxLimits(enforce='auto')",
        )
    sandbox_id = uuid.uuid4().hex[:16]
    state = Path(tempfile.mkdtemp(prefix="forge-sbx-"))
    inner = state / "inner"
    inner.mkdir()
    log_dir = spec.log_dir or state
    log_dir.mkdir(parents=True, exist_ok=True)
    bridges: list[Bridge] = []
    try:
        for port, target in spec.forwards.items():
            bridge = Bridge(parse_target(target))
            bridges.append(bridge)
            if no_sandbox:
                if target in (f"127.0.0.1:{port}", f"localhost:{port}"):
                    continue
                try:
                    await bridge.listen_tcp("127.0.0.1", port)
                except OSError as e:
                    raise ForgeError(
                        f"--no-sandbox: cannot forward host port {port} to {target}: {e}",
                        hint="without a sandbox the forward ports share the host's loopback; pick a free one",
                    ) from None
            else:
                await bridge.listen_unix(inner / f"fwd-{port}.sock")
        (inner / "inner.sh").write_text(_inner_script(list(spec.forwards), socat))
        env = {"PATH": _BASE_PATH, "HOME": str(spec.workdir.resolve()), "TMPDIR": "/tmp", "LANG": "C.UTF-8"}
        env.update(spec.env)
        env["FORGE_SANDBOX_ID"] = sandbox_id
        if no_sandbox:
            logger.warning(
                "running %s WITHOUT a sandbox (--no-sandbox): it can read and write the host and reach "
                "its network",
                spec.argv[0],
            )
            argv = [*_join_limits(cgroup, limits), *spec.argv]
        else:
            argv = [*_join_limits(cgroup, limits), *_bwrap_argv(spec, str(bwrap), inner)]
        sandbox = Sandbox(spec, sandbox_id, state, log_dir, cgroup, bridges, not no_sandbox)
        with open(log_dir / "stdout.log", "ab") as out, open(log_dir / "stderr.log", "ab") as err:
            sandbox._proc = await asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                env=env,
                cwd=spec.cwd or spec.workdir,
                start_new_session=True,
            )
        sandbox.started_at = time.time()
        return sandbox
    except BaseException:
        for bridge in bridges:
            await bridge.close()
        cgroup.remove()
        shutil.rmtree(state, ignore_errors=True)
        raise
