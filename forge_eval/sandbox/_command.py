"""A spec turned into the command line that runs it confined: the one home of the sandbox's confinement.

`sandboxed_command(spec)` prepares everything a confined process needs on the host (its cgroup, its
unprivileged user, the work directory given to that user, the forward listeners, a private state
directory) and returns the argv that runs `spec.argv` under bubblewrap with it. `start_sandbox` runs that
argv itself; a caller whose process someone else launches with pipes (Inspect's MCP client starting a stdio
server, a desktop started by its provider) hands the argv to that launcher and `close()`s the command
once the process has exited.

Inside, the first process (`/run/forge/inner.sh`, root's, unreadable to the sandbox user) starts the port
forwards as the sandbox user, waits until they listen, then replaces itself with `spec.argv` under a
clean environment as that user (`setpriv`: no capabilities, no groups, no_new_privs). That environment
(the rollout's key among it) is exported by the script, never put on a command line: any host uid can read
every process's /proc/PID/cmdline.
"""

import asyncio
import os
import re
import shlex
import shutil
import tempfile
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from forge_eval._errors import ForgeError, UsageError
from forge_eval.sandbox import _binds, _cgroups, _user
from forge_eval.sandbox._bridge import Bridge, parse_target
from forge_eval.sandbox._cgroups import Mechanism
from forge_eval.sandbox._spec import SandboxLimits, SandboxSpec
from forge_eval.sandbox._user import SandboxUser

SETUP_HINT = "run `bash scripts/setup.d/35-sandbox.sh` as root (it installs bubblewrap and socat from Debian)"
INNER = Path("/run/forge")  # where the sandbox sees its private state (bootstrap script, forward sockets)
_SYSTEM_DIRS = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")
_HIDDEN_FILES = ("/etc/shadow", "/etc/gshadow", "/etc/shadow-", "/etc/gshadow-")
_BASE_PATH = "/usr/local/bin:/usr/bin:/bin"
# bubblewrap run as root keeps these for the inner script alone, which gives them up (setpriv) before
# anything else runs; without a user namespace, root's uid in the sandbox is the host's root.
_ROOT_NAMESPACES = (
    "--unshare-ipc",
    "--unshare-pid",
    "--unshare-net",
    "--unshare-uts",
    "--unshare-cgroup-try",
)
_KEPT_CAPS = ("CAP_SETUID", "CAP_SETGID", "CAP_SETPCAP")
_SHELL_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")  # what the inner script can export


@dataclass
class SandboxedCommand:
    """A confined command ready to launch: run `argv` (any stdio; `env` is what `start_sandbox` passes,
    but the sandbox sets its own), then `close()` after the process has exited.

    Attributes:
        argv: The full command line: cgroup join, bubblewrap, the inner script, then `spec.argv`.
        env: The sandbox's environment (spec.env over the defaults, plus FORGE_SANDBOX_ID).
        id: Unique id, in the sandbox's environment as FORGE_SANDBOX_ID (for leak checks).
        user: Who the command runs as (None: as this process's own, non-root user).
        limits_applied: Which mechanism enforces each limit.
        sandboxed: False for a `no_sandbox` command (the same limits and forwards, no confinement).
    """

    argv: list[str]
    env: dict[str, str]
    id: str
    user: SandboxUser | None
    limits_applied: dict[str, Mechanism]
    sandboxed: bool
    _state: Path
    _cgroup: _cgroups.CgroupSet
    _bridges: list[Bridge]
    _owns_user: bool
    _closed: bool = field(default=False)

    async def kill_all(self) -> set[int]:
        """SIGKILL whatever is left in the command's cgroup; returns the pids that survived."""
        return await asyncio.to_thread(self._cgroup.kill_all)

    def oom_killed(self) -> bool:
        """Whether the kernel's OOM killer fired in the command's memory cgroup."""
        return self._cgroup.oom_killed()

    async def close(self) -> set[int]:
        """Kill what is left in the cgroup, remove it, stop the forwards, delete the private state and
        free the user. Idempotent; returns the pids that survived SIGKILL (normally none)."""
        if self._closed:
            return set()
        self._closed = True
        left = await self.kill_all()
        self._cgroup.remove()
        for bridge in self._bridges:
            await bridge.close()
        shutil.rmtree(self._state, ignore_errors=True)
        if self._owns_user:
            _user.release(self.user)
        return left

    async def __aenter__(self) -> "SandboxedCommand":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


def require(binary: str, why: str) -> str:
    path = shutil.which(binary)
    if path is None:
        raise ForgeError(f"{binary} is not installed; the local sandbox needs it {why}", hint=SETUP_HINT)
    return path


def check(spec: SandboxSpec) -> None:
    """A `UsageError` for a malformed spec, before anything is created."""
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
    if spec.workdir_at is not None and not Path(spec.workdir_at).is_absolute():
        raise UsageError(f"sandbox workdir_at {spec.workdir_at} is not absolute", hint="e.g. /data")
    for link in spec.links:
        if not Path(link).is_absolute() or len(Path(link).parts) < 3:
            raise UsageError(
                f"sandbox link {link} is not an absolute path below a top-level folder",
                hint="e.g. /run/user/1000",
            )
    for path in spec.ro_binds:
        if not Path(path).exists():
            raise UsageError(f"sandbox read-only bind {path} does not exist", hint="fix or drop the path")
    for name in spec.env:
        if not _SHELL_NAME.fullmatch(name):
            raise UsageError(
                f"sandbox environment variable name {name!r} is not a shell name",
                hint="use letters, digits and _, not starting with a digit",
            )
    for port in spec.forwards:
        if not 0 < int(port) < 65536:
            raise UsageError(f"sandbox forward port {port} is not a TCP port", hint="use 1..65535")
    limits = spec.limits
    if limits.cpus <= 0 or limits.memory_mb <= 0 or limits.pids <= 0:
        raise UsageError(f"sandbox limits must be positive, got {limits}", hint="e.g. SandboxLimits(2, 2048)")


def _system_binds(user: SandboxUser | None, state: Path) -> list[str]:
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
    if user is not None:  # the sandbox's own accounts instead of the host's
        args += [
            "--ro-bind",
            str(state / "passwd"),
            "/etc/passwd",
            "--ro-bind",
            str(state / "group"),
            "/etc/group",
        ]
    return args


def _bwrap_argv(spec: SandboxSpec, bwrap: str, state: Path, user: SandboxUser | None) -> list[str]:
    workdir = spec.workdir.resolve()
    binds = [(Path(p).resolve(), Path(p).resolve(), "--ro-bind") for p in spec.ro_binds]
    binds.append((workdir, spec.inner_workdir, "--bind"))
    binds.sort(key=lambda b: len(b[1].parts))  # parents before children; the workdir wins over its parent
    argv = [bwrap, *(_ROOT_NAMESPACES if user is not None else ["--unshare-all"])]
    argv += ["--die-with-parent", "--new-session", "--cap-drop", "ALL"]
    if user is not None:
        argv += [arg for cap in _KEPT_CAPS for arg in ("--cap-add", cap)]
    argv += ["--hostname", spec.hostname, *_system_binds(user, state)]
    argv += ["--dev", "/dev", "--proc", "/proc", "--perms", "1777", "--tmpfs", "/tmp", "--tmpfs", "/run"]
    for link, target in spec.links.items():
        # below a top-level folder bubblewrap would make the missing parents 0700 (root's)
        for parent in reversed(Path(link).parents[:-2]):
            argv += ["--perms", "0755", "--dir", str(parent)]
        argv += ["--symlink", target, link]
    made: set[Path] = set()
    for source, dest, mode in binds:
        # bubblewrap makes missing parents 0700 (root's), which the sandbox user could not pass through
        for parent in reversed(dest.parents[:-1]):
            if parent not in made:
                made.add(parent)
                argv += ["--dir", str(parent)]
        argv += [mode, str(source), str(dest)]
    # forge_eval's non-runtime packages (every benchmark's answer keys) stay hidden wherever the system
    # (a /usr/local install) or a bind (a regular install's venv) would show them: an empty tmpfs over each
    for source, dest in [(Path("/usr"), Path("/usr")), *((s, d) for s, d, _ in binds)]:
        argv += [arg for hidden in _binds.hidden_under(source, dest) for arg in ("--tmpfs", str(hidden))]
    # the work directory is the sandbox user's: only that user enters it (`env -C` in the inner script)
    argv += ["--ro-bind", str(state), str(INNER), "--chdir", "/"]
    # `env -i`: the inner script starts with none of the launcher's variables, so it exports `env` alone
    return [*argv, "--", "/usr/bin/env", "-i", "/bin/sh", str(INNER / "inner.sh"), *spec.argv]


def _inner_script(
    forwards: Sequence[int], socat: str, env: dict[str, str], become: list[str], cwd: Path
) -> str:
    """The sandbox's first process: start the forward listeners, wait until they listen, exec the command
    as the sandbox user, in `cwd`, with `env` only (so the command's exit status is the sandbox's).

    `env` is exported from this file (its owner's alone) rather than given to `env` as arguments, which
    every host uid could read in /proc/PID/cmdline while they start the command. Values may hold any
    character; names must be shell names (`check`)."""
    drop = shlex.join(become)
    lines = ["#!/bin/sh"]
    for port in forwards:
        listen = f"TCP-LISTEN:{port},bind=127.0.0.1,fork,reuseaddr UNIX-CONNECT:{INNER}/fwd-{port}.sock"
        lines.append(f"{drop} {socat} {listen} &".lstrip())
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
    lines += [f"export {name}={shlex.quote(value)}" for name, value in env.items()]
    unset = [] if "PWD" in env else ["-u", "PWD"]  # the one variable /bin/sh exports of its own
    run = ["/usr/bin/env", *unset, "-C", shlex.quote(str(cwd)), '"$@"']
    lines.append(" ".join(["exec", *([drop] if drop else []), *run]))
    return "\n".join(lines) + "\n"


def _join_limits(cgroup: _cgroups.CgroupSet, limits: SandboxLimits) -> list[str]:
    """A /bin/sh prefix that puts itself into the cgroup (or sets the rlimit) before exec'ing the rest, so
    no process of the sandbox ever runs outside its limits."""
    steps = [f"echo $$ > {shlex.quote(str(p))}" for p in cgroup.procs_files]
    if cgroup.applied.get("memory") == "rlimit":
        steps.append(f"ulimit -d {limits.memory_mb * 1024}")
    return ["/bin/sh", "-c", " && ".join([*steps, 'exec "$@"']), "forge-sandbox"]


def _environment(spec: SandboxSpec, sandbox_id: str) -> dict[str, str]:
    env = {"PATH": _BASE_PATH, "HOME": str(spec.inner_workdir), "TMPDIR": "/tmp", "LANG": "C.UTF-8"}
    env.update(spec.env)
    env["FORGE_SANDBOX_ID"] = sandbox_id
    return env


async def prepare(spec: SandboxSpec, *, no_sandbox: bool = False) -> SandboxedCommand:
    """`sandboxed_command`, or with `no_sandbox` the same limits and forwards around a plain host process
    (`start_sandbox`'s escape hatch)."""
    check(spec)
    if no_sandbox and spec.workdir_at is not None:
        raise UsageError(
            f"workdir_at={spec.workdir_at} needs the sandbox's own mount namespace", hint="drop no_sandbox"
        )
    bwrap = setpriv = socat = ""
    if not no_sandbox:
        bwrap = require("bwrap", "(Debian package bubblewrap)")
        socat = require("socat", "to forward ports into it") if spec.forwards else ""
    limits = spec.limits
    cgroup = _cgroups.create(limits.cpus, limits.memory_mb, limits.pids, limits.enforce)
    if limits.enforce == "cgroup" and cgroup.version is None:
        raise ForgeError(
            "the sandbox limits were asked to be enforced by a cgroup, but no writable cgroup (v1 or v2 with "
            "the memory, pids and cpu controllers) is available here",
            hint="run as root on a host with writable /sys/fs/cgroup, or use SandboxLimits(enforce='auto')",
        )
    sandbox_id = uuid.uuid4().hex[:16]
    state = Path(tempfile.mkdtemp(prefix="forge-sbx-")) / "inner"
    state.mkdir(mode=0o711)
    state.chmod(0o711)  # the sandbox user passes through to its forward sockets, and reads nothing else
    bridges: list[Bridge] = []
    owns_user = spec.user is None and not no_sandbox
    user = None
    try:
        user = None if no_sandbox else spec.user or _user.allocate()
        if user is not None:
            setpriv = require("setpriv", "to run the sandbox as an unprivileged user (Debian: util-linux)")
            (state / "passwd").write_text(user.passwd(spec.inner_workdir))
            (state / "group").write_text(user.group())
            await asyncio.to_thread(_user.give, spec.workdir.resolve(), user)
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
                socket = state / f"fwd-{port}.sock"
                await bridge.listen_unix(socket)
                if user is not None:
                    os.chown(socket, user.uid, user.gid)
        env = _environment(spec, sandbox_id)
        if no_sandbox:
            argv = [*_join_limits(cgroup, limits), *spec.argv]
        else:
            become = user.setpriv(setpriv) if user is not None else []
            script = state / "inner.sh"
            script.write_text(_inner_script(list(spec.forwards), socat, env, become, spec.inner_cwd))
            script.chmod(0o700)
            argv = [*_join_limits(cgroup, limits), *_bwrap_argv(spec, bwrap, state, user)]
        return SandboxedCommand(
            argv,
            env,
            sandbox_id,
            user,
            dict(cgroup.applied),
            not no_sandbox,
            state.parent,
            cgroup,
            bridges,
            owns_user,
        )
    except BaseException:
        for bridge in bridges:
            await bridge.close()
        cgroup.remove()
        shutil.rmtree(state.parent, ignore_errors=True)
        if owns_user:
            _user.release(user)
        raise


async def sandboxed_command(spec: SandboxSpec) -> SandboxedCommand:
    """The command line that runs `spec` in a fresh sandbox, for a launcher of our choosing.

    Same confinement as `start_sandbox`: the sandbox user (never root), read-only system and `ro_binds`,
    `spec.workdir` the only writable host path, own PID / network / IPC / UTS / mount namespaces, the
    `forwards` the only reachable ports, the limits by cgroup or rlimit, a clean environment. Stdio is
    whatever the launcher gives the process. `timeout_s` and `log_dir` are the launcher's business.

    Example:
        async with await sandboxed_command(SandboxSpec(argv=[server, *args], workdir=data)) as command:
            server = mcp_server_stdio(name=name, command=command.argv[0], args=command.argv[1:])
            ...  # once the launcher has ended the process, leaving the block removes the rest

    Raises:
        ForgeError: bubblewrap, setpriv (or socat, with forwards) is missing, or a limit cannot be
            enforced as asked.
        UsageError: A malformed spec.
    """
    return await prepare(spec)
