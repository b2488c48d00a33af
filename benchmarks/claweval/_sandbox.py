"""Upstream's sandbox server (`src/claw_eval/sandbox/server.py`) in our bubblewrap sandbox, one per trial.

Upstream runs that server in a Docker container per trial (`claw-eval batch --sandbox`) and reaches it on a
mapped port; its tools (Bash, Read, Write, Edit, Glob, Grep, ...) act on the container's `/workspace`. Here
the same server runs in upstream's venv inside `sandboxed_command`: a fresh unprivileged user, the trial's
workspace folder shown at `/workspace` (its only writable path), upstream's venv, the server's own folder
and its launcher read-only (not the rest of the tree: graders and expected answers stay out of its view),
its own network namespace with no port forwarded out, so the code the model runs there reaches neither
the model server nor the proxies.

The grader reads the sandbox through that server (upstream's grader-only files and environment snapshot),
and the agent's code runs as the server's uid, so nothing the agent runs may stand in for the server:

- The server listens on its own loopback, not dumpable (`_driver/serve.py`): the agent's uid can neither
  ptrace it nor take its sockets. The host reaches it by a `PrivatePort`: a host loopback port that only
  forge-eval and the trial's driver may use (no other host uid drives the sandbox), each connection opened
  from the host into the sandbox's network namespace and kept only while the server's port is served by
  the socket it listened on when it first answered. A server the agent kills or stops is a failed read,
  never a forged one.
- Before the grader-only files go in, every process of the sandbox but the server ends (`end_leftovers`,
  asked for by the driver): nothing the agent left running can rewrite them or trace the grader's commands.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path

import httpx

from forge_eval._errors import ForgeError
from forge_eval.benchmarks.claweval._driver import SERVE
from forge_eval.benchmarks.claweval._upstream import base_interpreter, venv_dir
from forge_eval.sandbox import NetworkNamespace, PrivatePort, SandboxSpec, sandboxed_command, socket_holders

#: Where upstream's tools see the task's files (the server's WORKSPACE_ROOT).
WORKSPACE = Path("/workspace")
#: The server's port on the sandbox's own loopback (upstream's `sandbox_port`).
SERVER_PORT = 8080
_READY_S = 60.0
_END_S = 10.0


class SandboxServer:
    """The trial's running server: `url` reaches it from this process and the pids given to `allow`."""

    def __init__(self, uid: int, network: NetworkNamespace) -> None:
        self.uid = uid
        self._network = network
        #: The socket the server listened on when it first answered: the only one the host may reach.
        self._listener: str | None = None
        self._allowed = {os.getpid()}
        connect = network.connector(SERVER_PORT, lambda inode: self._listener in (None, inode))
        self._port = PrivatePort(connect, allowed=lambda: tuple(self._allowed))
        self.url = f"http://127.0.0.1:{self._port.port}"

    def allow(self, pid: int) -> None:
        """Let process `pid` (the trial's driver, where upstream's client runs) use `url` too."""
        self._allowed.add(pid)

    async def wait_ready(self, process: asyncio.subprocess.Process, log: Path) -> None:
        """Wait for the server's first answer, then trust only the socket that gave it."""
        deadline = time.monotonic() + _READY_S
        async with httpx.AsyncClient(timeout=2.0, trust_env=False) as client:
            while time.monotonic() < deadline and process.returncode is None:
                with contextlib.suppress(httpx.HTTPError):
                    if (await client.get(f"{self.url}/health")).status_code == 200:
                        self._listener = await asyncio.to_thread(self._network.listener, SERVER_PORT)
                        if self._listener is not None:
                            return
                await asyncio.sleep(0.2)
        tail = log.read_text(encoding="utf-8", errors="replace")[-2000:]
        raise ForgeError(f"Claw-Eval's sandbox server did not start in its sandbox:\n{tail}")

    def end_leftovers(self) -> list[int]:
        """End every process of the sandbox but the server (the holder of its trusted socket): what the
        agent left running (daemons, background jobs). Each is stopped first, until none runs, so that
        none can fork or wake another past the SIGKILL; then a server the agent stopped answers the
        grader again. Returns the pids ended."""
        server = set(socket_holders(self._listener, _processes(self.uid))) if self._listener else set()
        deadline = time.monotonic() + _END_S
        while time.monotonic() < deadline:
            left = _processes(self.uid)
            running = [pid for pid, state in left.items() if pid not in server and state not in "tT"]
            if not running:
                break
            for pid in running:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGSTOP)
            time.sleep(0.01)
        ended = [pid for pid in _processes(self.uid) if pid not in server]
        for pid in ended:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        while time.monotonic() < deadline and set(_processes(self.uid)) - server:
            time.sleep(0.01)
        for pid in server:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)
        return ended

    def close(self) -> None:
        self._port.close()
        self._network.close()


@contextlib.asynccontextmanager
async def sandbox_server(
    tree: Path, python: Path, workspace: Path, log: Path
) -> AsyncIterator[SandboxServer]:
    """Serve upstream's sandbox server for one trial; yields it (its `url` is the driver's `sandbox_url`)."""
    if os.geteuid() != 0:
        raise ForgeError(
            "Claw-Eval's sandbox needs root: its server runs as a uid of its own, which only root can switch "
            "to, reach (its network namespace) and clean up after",
            hint="run forge-eval as root (e.g. in a CI VM or container), or pass -T sandbox=none",
        )
    # resolved: the sandbox shows its binds at their real paths, so a tree reached through a symlink
    # (a data dir linked elsewhere) must be named by its real path on the command line too
    server_dir = (tree / "src" / "claw_eval" / "sandbox").resolve()
    async with contextlib.AsyncExitStack() as stack:
        # the launcher alone, in a folder of its own (its home, this checkout, is not shown)
        folder = stack.enter_context(tempfile.TemporaryDirectory(prefix="forge-claweval-"))
        launcher = Path(folder) / SERVE.name
        shutil.copyfile(SERVE, launcher)
        launcher.chmod(0o644)
        # `-I`: nothing of the agent's (/workspace, its cwd and HOME) is ever on the server's import path
        argv = [str(python), "-I", str(launcher), "--host", "127.0.0.1", "--port", str(SERVER_PORT)]
        argv += ["--app-dir", str(server_dir), "server:app"]
        spec = SandboxSpec(
            argv=argv,
            workdir=workspace,
            workdir_at=WORKSPACE,
            cwd=workspace,
            # `python` is upstream's venv first on PATH, as its image's python holds the server's
            # requirements
            env={"HOME": str(WORKSPACE), "LANG": "C.UTF-8", "PATH": f"{python.parent}:/usr/bin:/bin"},
            ro_binds=[venv_dir(), base_interpreter(), server_dir, launcher],
        )
        command = await stack.enter_async_context(await sandboxed_command(spec))
        assert command.user is not None  # root: a uid of its own
        with open(log, "ab") as out:
            process = await asyncio.create_subprocess_exec(
                *command.argv, env=command.env, stdout=out, stderr=asyncio.subprocess.STDOUT,
                start_new_session=True,
            )
        server = None
        try:
            server = SandboxServer(command.user.uid, await _network(command.user.uid, process, log))
            await server.wait_ready(process, log)
            yield server
        finally:
            if process.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                await process.wait()
            if server is not None:
                server.close()


async def _network(uid: int, process: asyncio.subprocess.Process, log: Path) -> NetworkNamespace:
    """The sandbox's network namespace, held from its first process of `uid`."""
    deadline = time.monotonic() + _READY_S
    while time.monotonic() < deadline and process.returncode is None:
        for pid in _processes(uid):
            with contextlib.suppress(FileNotFoundError, ProcessLookupError):
                return NetworkNamespace(pid)
        await asyncio.sleep(0.02)
    tail = log.read_text(encoding="utf-8", errors="replace")[-2000:]
    raise ForgeError(f"Claw-Eval's sandbox did not start:\n{tail}")


def _processes(uid: int) -> dict[int, str]:
    """pid -> state (`ps`'s letter) of every live (not zombie) process whose real uid is `uid`: only the
    sandbox's own processes run as its uid. Read from /proc/PID/status: a process that is not dumpable
    (the server) shows its /proc folder as root's."""
    found = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                lines = Path(f"/proc/{entry}/status").read_text().splitlines()
                fields = dict(line.split(":", 1) for line in lines)
                state, real_uid = fields["State"].split()[0], int(fields["Uid"].split()[0])
            except (FileNotFoundError, ProcessLookupError, KeyError, ValueError):
                continue
            if real_uid == uid and state != "Z":
                found[int(entry)] = state
    return found
