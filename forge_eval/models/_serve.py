"""Run the embedded model server in this process (the foreground CLI and the child process)."""

from __future__ import annotations

import errno
import os
import socket
import threading
import time
from collections.abc import Callable
from pathlib import Path

import uvicorn

from forge_eval._errors import ForgeError
from forge_eval._net import tcp_socket
from forge_eval.models._spec import EmbeddedModelSpec

HOST = "127.0.0.1"


def bind_socket(port: int | None) -> socket.socket:
    """A listening socket on 127.0.0.1 (`port` None: a free one).

    Binding before the model loads turns a busy port into an immediate, clear error, and lets a
    parent hand the socket to its child (no race between picking a free port and using it).
    """
    sock = tcp_socket()
    try:
        sock.bind((HOST, port or 0))
    except OSError as e:
        sock.close()
        if e.errno == errno.EADDRINUSE:
            raise ForgeError(
                f"port {port} on {HOST} is already in use",
                hint="choose another port with --port (port= in Python), or leave it out to pick a free one",
            ) from None
        raise ForgeError(f"cannot listen on {HOST}:{port}: {e.strerror}") from None
    sock.listen(128)
    return sock


def _exit_when_orphaned(parent_pid: int) -> None:
    """Stop this server if the process that started it dies (even by SIGKILL).

    An orphan has nobody to answer, so it exits at once: a graceful uvicorn shutdown would wait for
    an in-flight generation that nobody reads (seen: an orphan decoding on for minutes).
    """

    def watch() -> None:
        while os.getppid() == parent_pid:
            time.sleep(1.0)
        os._exit(0)

    threading.Thread(target=watch, name="forge-parent-watch", daemon=True).start()


def serve(
    spec: EmbeddedModelSpec,
    sock: socket.socket,
    threads: int | None = None,
    request_log: Path | None = None,
    model_path: Path | None = None,
    on_ready: Callable[[str], None] | None = None,
    parent_pid: int | None = None,
    deterministic: bool = False,
    verbose: bool = False,
) -> None:
    """Load `spec`'s weights and serve them on `sock` until interrupted.

    Args:
        spec: The embedded model.
        sock: A bound, listening socket (see `bind_socket`).
        threads: CPU threads for llama.cpp (None: the cores idle now, see `default_threads`).
        request_log: Append one JSON line per chat request here.
        model_path: Serve this GGUF file instead of the spec's packaged weights.
        on_ready: Called with the base URL once the model is loaded.
        parent_pid: Exit when this process is no longer our parent.
        deterministic: Repeatable seeded sampling at the cost of speed (see `create_app`).
        verbose: Let llama.cpp log each request's timings and slot use to stderr.
    """
    # deferred: the llama.cpp binding (xllamacpp) loads in the server process only, not in its parent
    from forge_eval.models._app import create_app
    from forge_eval.models._engine import LlamaEngine

    if parent_pid is not None:
        _exit_when_orphaned(parent_pid)
    engine = LlamaEngine(
        model_path or spec.weights_path(),
        threads=threads,
        n_ctx_per_slot=spec.n_ctx_per_slot,
        verbose=verbose,
    )
    app = create_app(engine, spec.name, request_log, deterministic=deterministic)
    host, port = sock.getsockname()[:2]
    if on_ready is not None:
        on_ready(f"http://{host}:{port}/v1")
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off")
    uvicorn.Server(config).run(sockets=[sock])
