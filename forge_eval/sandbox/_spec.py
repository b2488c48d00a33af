"""What one sandbox runs and how it is confined: `SandboxSpec` and its `SandboxLimits`."""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from forge_eval.sandbox._cgroups import Enforce
from forge_eval.sandbox._user import SandboxUser


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
        workdir: Existing host directory, the only writable host path in the sandbox (given to the
            sandbox user); the default cwd and HOME.
        env: Environment of the command; nothing of the host's environment is inherited.
        forwards: Port on the sandbox's own 127.0.0.1 -> host target ("127.0.0.1:8400" or a Unix socket
            path). Only these are reachable; each needs socat in the sandbox.
        ro_binds: Extra host paths made visible read-only at the same path (npm prefix, a virtualenv;
            see `python_ro_binds()`). Never a folder holding credentials, records or a grader's inputs
            (forge_eval's non-runtime packages stay hidden under any bind).
        limits: CPU / memory / pids caps.
        timeout_s: Default budget of `Sandbox.wait()`, from the start.
        log_dir: Where stdout.log / stderr.log are kept (they outlive the sandbox); default a private
            temporary directory removed at cleanup (the tails stay in the result).
        hostname: The sandbox's hostname.
        cwd: Working directory of the command, a host path inside `workdir` (default `workdir`).
        workdir_at: Where the sandbox sees `workdir` (default: the same path), e.g. `/data` for servers
            whose upstream image holds their files there.
        user: The unprivileged user to run as; default a fresh one for this sandbox. Sandboxes that
            share one work directory share one (`sandbox_user()`), so each can write what the others made.
        links: Symbolic links made in the sandbox, path -> target: a path an upstream image has (OSWorld's
            session bus at /run/user/1000/bus) where only root could create it.
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
    workdir_at: Path | None = None
    user: SandboxUser | None = None
    links: Mapping[str, str] = field(default_factory=dict)

    @property
    def inner_workdir(self) -> Path:
        """The work directory as the sandbox sees it."""
        return Path(self.workdir_at) if self.workdir_at is not None else self.workdir.resolve()

    @property
    def inner_cwd(self) -> Path:
        """The command's working directory as the sandbox sees it."""
        if self.cwd is None:
            return self.inner_workdir
        return self.inner_workdir / Path(self.cwd).resolve().relative_to(self.workdir.resolve())
