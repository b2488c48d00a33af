"""Running an ASGI app (the proxy, the scripted upstream) with uvicorn: in the foreground for the CLI, or
in a background thread for tests and benchmarks."""

import asyncio
import contextlib
import socket
import threading
import time
from collections.abc import AsyncIterator, Generator, Iterator
from typing import Any

import uvicorn


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _uvicorn_config(app: Any, host: str, port: int, access_log: bool = False) -> uvicorn.Config:
    # loop/http "auto": uvloop and httptools when installed (several times faster than asyncio + h11)
    return uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level="info" if access_log else "warning",
        access_log=access_log,
        timeout_keep_alive=75,
        lifespan="on",
    )


def serve_forever(app: Any, host: str = "127.0.0.1", port: int = 8377, access_log: bool = False) -> None:
    """Serve until interrupted (Ctrl-C or SIGTERM: in-flight calls finish, records are flushed)."""
    uvicorn.Server(_uvicorn_config(app, host, port, access_log)).run()


class ServerThread:
    """An app served on 127.0.0.1 from a background thread; `url` once started."""

    def __init__(self, app: Any, port: int | None = None) -> None:
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._server = uvicorn.Server(_uvicorn_config(app, "127.0.0.1", self.port))
        self._thread = threading.Thread(target=self._run, name=f"serve-{self.port}", daemon=True)

    def _run(self) -> None:
        self._server.run()  # signal handlers are only installed from the main thread

    def start(self, timeout: float = 10.0) -> "ServerThread":
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"server on port {self.port} did not start")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=10)


@contextlib.contextmanager
def serve_in_thread(app: Any, port: int | None = None) -> Iterator[ServerThread]:
    """Serve `app` for the duration of a `with` block."""
    server = ServerThread(app, port).start()
    try:
        yield server
    finally:
        server.stop()


class _EmbeddedServer(uvicorn.Server):
    """A server inside someone else's event loop (an Inspect sample): the host owns the signals."""

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        yield


@contextlib.asynccontextmanager
async def serve_in_task(app: Any, port: int | None = None) -> AsyncIterator[str]:
    """Serve `app` from a task of the running event loop; yields its URL.

    Request handlers then run in the caller's context, so that an `InspectUpstream` records its model
    calls in the transcript of the sample that started the proxy.
    """
    port = port or free_port()
    server = _EmbeddedServer(_uvicorn_config(app, "127.0.0.1", port))
    task = asyncio.create_task(server.serve())
    try:
        while not server.started:
            if task.done():
                task.result()
                raise RuntimeError(f"server on port {port} did not start")
            await asyncio.sleep(0.01)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await task
