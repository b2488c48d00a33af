"""The desktop in a container of a local engine (`docker`, `podman`): the local desktop's programs, its
session and server, and its channels, with the engine in place of bubblewrap.

The image (`_image`) holds the local desktop's Debian packages and OSWorld's user `user`, nothing else.
Each container gets the local desktop's tools folder (the `_inside` programs, the run's OSWorld server,
the desktop's Python packages, the launchers) copied in before it starts, root-owned at the same path as
on the host, so that everything the local desktop runs — and every path its environment names — is the
same. The container runs as `user`, with no network (`--network none`: its own loopback only), no
capability, no_new_privs, no mount of a host path and only the session's environment (nothing of this
process's: no credential), under the local desktop's caps.

The host reaches the server exactly as it reaches the local desktop's (`LocalDesktop._open_channels`):
a `PrivatePort` opened by this process into the container's network namespace, kept only while the
server's port is held by the socket it listened on at start (VLC's by VLC, Chrome's by the browser). No
port is published: the engine's port forwarding would be a host port of its own, or a proxy process.

A run killed with SIGKILL leaves its containers running; each carries its run's identity as a label,
and the next start removes those whose run is gone.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import tarfile
from dataclasses import dataclass, field
from pathlib import Path

from forge_eval._errors import ForgeError
from forge_eval.benchmarks.osworld._chrome import CHROME_DIR
from forge_eval.benchmarks.osworld._client import HOME, DesktopClient
from forge_eval.benchmarks.osworld._desktop import (
    LIMITS,
    SERVER_AT,
    SERVER_PORT,
    START_TIMEOUT,
    STATE_ROOT,
    SYSTEM_PYTHON,
    LocalDesktop,
    _claim,
    _pid_namespace,
    _process_identity,
    clean_leftovers,
)
from forge_eval.benchmarks.osworld._image import engine_command, ensure_image

#: Chromium's binary under the name `chrome` in the image (a hard link made by the Dockerfile): the tools
#: folder's `chrome` leads there, not to the host's binary (which the local desktop links).
IMAGE_CHROME = "/usr/lib/chromium/chrome"
#: The container's seccomp filter: every system call but these (EPERM). The engine's default profile
#: also refuses new user namespaces to a process without CAP_SYS_ADMIN, and Chromium's sandbox (every
#: renderer in namespaces of its own) needs them, as it has them in the local desktop's sandbox (which has
#: no filter at all). Refused: kernel modules, keyrings, BPF, perf, userfaultfd, io_uring, clocks, swap,
#: reboot, accounting, raw I/O ports, file handles, and the other calls the engine's profile refuses to an
#: unprivileged container for their attack surface.
SECCOMP_REFUSED = (
    "acct", "add_key", "bpf", "clock_adjtime", "clock_settime", "create_module", "delete_module",
    "finit_module", "get_kernel_syms", "init_module", "io_uring_enter", "io_uring_register",
    "io_uring_setup", "ioperm", "iopl", "kcmp", "kexec_file_load", "kexec_load", "keyctl",
    "lookup_dcookie", "name_to_handle_at", "nfsservctl", "open_by_handle_at", "perf_event_open",
    "quotactl", "reboot", "request_key", "settimeofday", "stime", "swapoff", "swapon", "sysfs", "_sysctl",
    "uselib", "userfaultfd", "ustat", "vm86", "vm86old",
)  # fmt: skip
#: Chromium's shared memory (the engine's default /dev/shm is 64 MB).
SHM_SIZE = "512m"
#: The label that names the run (pid and start time) a container belongs to.
OWNER_LABEL = "forge-eval.osworld.owner"


@dataclass
class ContainerDesktop(LocalDesktop):
    """One desktop in its own container of `engine`; `client` reaches its in-desktop server."""

    engine: str = "docker"
    container: str | None = None
    #: The container's first process, as the host sees it.
    _init: int = -1
    _namespace: str | None = field(default=None, repr=False)

    def start(self) -> ContainerDesktop:
        return self._start_clean()

    def _leftovers(self) -> list[str]:
        return [*clean_leftovers(), *remove_leftover_containers(self.engine)]

    def _start(self) -> None:
        image = ensure_image(self.engine)
        self.state = _claim(-1)  # no host uid: the container's processes are the engine's
        tools = self._write_tools()
        session = [SYSTEM_PYTHON, "-s", str(tools / "session.py"), f"--screen={self.width}x{self.height}"]
        server = [SYSTEM_PYTHON, "-s", str(tools / "serve.py"), str(tools / SERVER_AT / "main.py")]
        environment = [f"--env={name}={value}" for name, value in self._environment(tools).items()]
        create = [
            *engine_command(self.engine),
            "create",
            "--network=none",
            "--cap-drop=ALL",
            "--security-opt=no-new-privileges",
            f"--security-opt=seccomp={self._seccomp_profile()}",
            f"--shm-size={SHM_SIZE}",
            "--user=user",
            f"--workdir={HOME}",
            "--hostname=osworld",
            f"--memory={LIMITS.memory_mb}m",
            f"--cpus={LIMITS.cpus}",
            f"--pids-limit={LIMITS.pids}",
            f"--label={OWNER_LABEL}={_process_identity(os.getpid())}",
            *environment,
            image,
            "/usr/bin/tini",  # PID 1, reaping the desktop's orphans as the sandbox's does
            "--",
            *session,
            "--",
            *server,
        ]
        self.container = _run(create, "create the desktop's container").strip()
        _run(
            [*engine_command(self.engine), "cp", "-", f"{self.container}:/"],
            "copy the tools folder into the container",
            stdin=_tools_archive(tools),
        )
        _run([*engine_command(self.engine), "start", self.container], "start the desktop's container")
        self._init = int(self._inspect("{{.State.Pid}}"))
        self._namespace = _pid_namespace(self._init)
        self._open_channels()
        self.client = DesktopClient("127.0.0.1", self.ports[SERVER_PORT])
        self.client.wait_ready(START_TIMEOUT, self._gone)
        self._server_socket = self._network.listener(SERVER_PORT) if self._network else None

    def _seccomp_profile(self) -> Path:
        assert self.state is not None
        profile = self.state / "seccomp.json"
        refused = {"names": list(SECCOMP_REFUSED), "action": "SCMP_ACT_ERRNO", "errnoRet": 1}
        profile.write_text(json.dumps({"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [refused]}))
        return profile

    def _write_tools(self) -> Path:
        tools = super()._write_tools()
        chrome = tools / CHROME_DIR / "chrome"
        chrome.unlink()
        chrome.symlink_to(IMAGE_CHROME)
        return tools

    @property
    def root(self) -> Path:
        """The container's file system, seen from the host through its first process."""
        return Path(f"/proc/{self._init}/root")

    def _inspect(self, template: str) -> str:
        assert self.container is not None
        return _run(
            [*engine_command(self.engine), "inspect", "--format", template, self.container],
            "inspect the desktop's container",
        ).strip()

    def _gone(self) -> str | None:
        """Why the container has ended, or None while it runs."""
        if self.container is None:
            return "it was not created"
        if self._inspect("{{.State.Running}}") == "true":
            return None
        logs = subprocess.run(
            [*engine_command(self.engine), "logs", "--tail", "5", self.container],
            capture_output=True,
            text=True,
        )
        tail = (logs.stdout + logs.stderr).strip().replace("\n", " | ")
        return f"its container exited with code {self._inspect('{{.State.ExitCode}}')}: {tail or 'no output'}"

    def processes(self) -> list[int]:
        """Host pids of the container's processes (those in its PID namespace)."""
        if self._namespace is None:
            return []
        pids = []
        for entry in os.listdir("/proc"):
            if entry.isdigit() and _pid_namespace(int(entry)) == self._namespace:
                with contextlib.suppress(OSError, IndexError):
                    state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
                    if state != "Z":
                        pids.append(int(entry))
        return pids

    def stop(self) -> None:
        """Remove the container (every process of it ends with it), then the channels and state folder."""
        if self.container is not None:
            subprocess.run(
                [*engine_command(self.engine), "rm", "--force", self.container], capture_output=True
            )
            self.container = None
        self._init, self._namespace = -1, None
        super().stop()


def _tools_archive(tools: Path) -> bytes:
    """A tar of `tools` at its own absolute path, root-owned (the engine extracts it at /)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:

        def as_root(info: tarfile.TarInfo) -> tarfile.TarInfo:
            info.uid = info.gid = 0
            info.uname = info.gname = "root"
            return info

        for folder in (STATE_ROOT, tools.parent):  # the state folders' modes (0711), as on the host
            archive.add(folder, arcname=str(folder).lstrip("/"), recursive=False, filter=as_root)
        archive.add(tools, arcname=str(tools).lstrip("/"), filter=as_root)
    return buffer.getvalue()


def _run(argv: list[str], what: str, stdin: bytes | None = None) -> str:
    done = subprocess.run(argv, input=stdin, capture_output=True)
    if done.returncode != 0:
        raise ForgeError(
            f"could not {what}: {argv[0]} exited with code {done.returncode}: "
            f"{done.stderr.decode(errors='replace').strip()[-400:]}"
        )
    return done.stdout.decode()


def remove_leftover_containers(engine: str) -> list[str]:
    """Remove the desktop containers of runs that are gone (killed before they could stop them)."""
    listed = subprocess.run(
        [
            *engine_command(engine),
            "ps",
            "--all",
            "--filter",
            f"label={OWNER_LABEL}",
            "--format",
            f'{{{{.ID}}}} {{{{.Label "{OWNER_LABEL}"}}}}',
        ],
        capture_output=True,
        text=True,
    )
    removed = []
    for line in listed.stdout.splitlines():
        container, _, owner = line.partition(" ")
        pid = owner.split()[0] if owner.split() else ""
        if pid.isdigit() and _process_identity(int(pid)) == owner:
            continue  # its run is alive
        subprocess.run([*engine_command(engine), "rm", "--force", container], capture_output=True)
        removed.append(f"{engine} container {container}")
    return removed
