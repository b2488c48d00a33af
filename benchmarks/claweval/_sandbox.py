"""Upstream's sandbox server (`src/claw_eval/sandbox/server.py`) in our bubblewrap sandbox, one per trial.

Upstream runs that server in a Docker container per trial (`claw-eval batch --sandbox`) and reaches it on a
mapped port; its tools (Bash, Read, Write, Edit, Glob, Grep, ...) act on the container's `/workspace`. Here
the same server runs in upstream's venv inside `sandboxed_command`: a fresh unprivileged user, the trial's
workspace folder shown at `/workspace` (its only writable path), upstream's venv and the server's own
folder read-only (not the rest of the tree: graders and expected answers stay out of its view), its own
network namespace with no port forwarded out. The host hands it a listening socket (uvicorn `--fd`), the
one way in; so the code the model runs there reaches neither the model server nor the proxies.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import time
from collections.abc import AsyncIterator
from pathlib import Path

import httpx

from forge_eval._errors import ForgeError
from forge_eval.benchmarks.claweval._upstream import base_interpreter, venv_dir
from forge_eval.sandbox import SandboxSpec, sandboxed_command

#: Where upstream's tools see the task's files (the server's WORKSPACE_ROOT).
WORKSPACE = Path("/workspace")
_READY_S = 60.0


@contextlib.asynccontextmanager
async def sandbox_server(tree: Path, python: Path, workspace: Path, log: Path) -> AsyncIterator[str]:
    """Serve upstream's sandbox server for one trial; yields its URL (the `sandbox_url` of the driver)."""
    # resolved: the sandbox shows its binds at their real paths, so a tree reached through a symlink
    # (a data dir linked elsewhere) must be named by its real path on the command line too
    server_dir = (tree / "src" / "claw_eval" / "sandbox").resolve()
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    fd = listener.fileno()
    url = f"http://127.0.0.1:{listener.getsockname()[1]}"
    argv = [str(python), "-m", "uvicorn", "--fd", str(fd), "--app-dir", str(server_dir), "server:app"]
    spec = SandboxSpec(
        argv=argv,
        workdir=workspace,
        workdir_at=WORKSPACE,
        cwd=workspace,
        # `python` is upstream's venv first on PATH, as its image's python holds the server's requirements
        env={"HOME": str(WORKSPACE), "LANG": "C.UTF-8", "PATH": f"{python.parent}:/usr/bin:/bin"},
        ro_binds=[venv_dir(), base_interpreter(), server_dir],
    )
    try:
        async with await sandboxed_command(spec) as command:
            with open(log, "ab") as out:
                process = await asyncio.create_subprocess_exec(
                    *command.argv, env=command.env, stdout=out, stderr=asyncio.subprocess.STDOUT,
                    pass_fds=[fd], start_new_session=True,
                )
            try:
                await _ready(url, process, log)
                yield url
            finally:
                if process.returncode is None:
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(process.pid, signal.SIGKILL)
                    await process.wait()
    finally:
        listener.close()


async def _ready(url: str, process: asyncio.subprocess.Process, log: Path) -> None:
    deadline = time.monotonic() + _READY_S
    async with httpx.AsyncClient(timeout=2.0, trust_env=False) as client:
        while time.monotonic() < deadline:
            if process.returncode is not None:
                break
            with contextlib.suppress(httpx.HTTPError):
                if (await client.get(f"{url}/health")).status_code == 200:
                    return
            await asyncio.sleep(0.2)
    tail = log.read_text(encoding="utf-8", errors="replace")[-2000:]
    raise ForgeError(f"Claw-Eval's sandbox server did not start in its sandbox:\n{tail}")
