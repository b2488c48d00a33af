"""Running the proxy's apps with uvicorn: in the foreground for the CLI, or in a background thread for
tests, benchmarks and in-process trainers.

The data plane (harness-facing) and the control plane (admin) are two apps on two listeners, served from
one event loop so that they share the proxy's state without locks. Sockets are bound here, before uvicorn
starts, so that a port in use is a clear error (uvicorn would `sys.exit`) and a Unix socket gets mode 0600
before anyone can connect. The loop is uvloop's and the HTTP parser httptools: uvicorn picks them only in
its own `run()`, not in `Server.serve()` on a loop someone else made, so the loop is made here. The data
plane's connections are the proxy's own protocol (`_protocol`: model calls without uvicorn's ASGI cycle).
"""

import asyncio
import contextlib
import os
import signal
import socket
import stat
import threading
import time
from collections.abc import AsyncIterator, Coroutine, Generator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import uvicorn

from forge_eval._net import tcp_socket
from forge_eval.proxy._protocol import DataProtocol

try:
    import uvloop
except ImportError:  # Windows: asyncio's own loop
    uvloop = None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass(frozen=True)
class Listener:
    """Where an app listens: a TCP host and port (0: any free port) or a Unix socket path."""

    host: str = "127.0.0.1"
    port: int = 0
    uds: Path | None = None

    def bind(self) -> socket.socket:
        """A bound socket (OSError when the address is taken); a Unix socket is made 0600 first."""
        if self.uds is not None:
            path = Path(self.uds)
            with contextlib.suppress(FileNotFoundError):
                if stat.S_ISSOCK(path.lstat().st_mode):  # a stale socket of a previous run
                    path.unlink()
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            old = os.umask(0o177)  # created 0600: no window in which another user can connect
            try:
                sock.bind(str(path))
            finally:
                os.umask(old)
            return sock
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        sock = tcp_socket(family)
        try:
            sock.bind((self.host, self.port))
        except OSError:
            sock.close()
            raise
        return sock


def url_of(sock: socket.socket) -> str:
    """The URL of a bound socket (`unix:<path>` for a Unix socket)."""
    if sock.family == socket.AF_UNIX:
        return f"unix:{sock.getsockname()}"
    host, port = sock.getsockname()[:2]
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def _uvicorn_config(app: Any, access_log: bool = False) -> uvicorn.Config:
    """The data plane (an app with `model_route`) is served by the proxy's own protocol, unless an access
    log is asked for (uvicorn's protocol writes it); everything else by uvicorn's httptools protocol."""
    fast = hasattr(app, "model_route") and not access_log
    return uvicorn.Config(
        app,
        http=DataProtocol if fast else "httptools",
        proxy_headers=False,  # nothing reads the client's address; skip the X-Forwarded-* middleware
        log_level="info" if access_log else "warning",
        access_log=access_log,
        timeout_keep_alive=75,
        lifespan="on",
    )


def run_loop(main: Coroutine[Any, Any, None]) -> None:
    """`asyncio.run(main)` on a uvloop event loop (where uvloop installs)."""
    with asyncio.Runner(loop_factory=uvloop.new_event_loop if uvloop else None) as runner:
        runner.run(main)


class _EmbeddedServer(uvicorn.Server):
    """A server that leaves the process's signals alone (its host or a sibling server owns them)."""

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        yield


async def _serve_pair(
    data: uvicorn.Server,
    data_socket: socket.socket,
    control: uvicorn.Server | None,
    control_socket: socket.socket | None,
) -> None:
    """Serve both apps; the control plane stops as soon as the data plane starts shutting down."""
    if control is None or control_socket is None:
        await data.serve(sockets=[data_socket])
        return
    control_task = asyncio.create_task(control.serve(sockets=[control_socket]))

    async def follow() -> None:
        while not (data.should_exit or control_task.done()):
            await asyncio.sleep(0.05)
        control.should_exit = True

    follower = asyncio.create_task(follow())
    try:
        await data.serve(sockets=[data_socket])
    finally:
        control.should_exit = True
        await control_task
        follower.cancel()


def serve_forever(
    app: Any,
    listener: Listener,
    control: Any = None,
    control_listener: Listener | None = None,
    access_log: bool = False,
) -> None:
    """Serve until interrupted (Ctrl-C or SIGTERM: in-flight calls finish, records are flushed, a Unix
    socket is removed), then end as the signal would have (uvicorn's convention; a second one forces).

    Both sockets are bound before this returns control to uvicorn, so a taken port raises OSError here.
    """
    data_socket = listener.bind()
    control_socket = control_listener.bind() if control is not None and control_listener else None
    data = _EmbeddedServer(_uvicorn_config(app, access_log))
    embedded = _EmbeddedServer(_uvicorn_config(control, access_log)) if control_socket else None
    received: list[int] = []

    def stop(signum: int, frame: object) -> None:
        received.append(signum)
        data.force_exit = data.should_exit
        data.should_exit = True

    previous = {signum: signal.signal(signum, stop) for signum in (signal.SIGINT, signal.SIGTERM)}
    try:
        run_loop(_serve_pair(data, data_socket, embedded, control_socket))
    finally:
        _unlink_sockets(listener, control_listener if control_socket else None)
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    if received:
        signal.raise_signal(received[0])


def _unlink_sockets(*listeners: Listener | None) -> None:
    """Remove the Unix sockets we bound (by path: uvicorn has closed them, so they no longer know it)."""
    for listener in listeners:
        if listener is not None and listener.uds is not None:
            with contextlib.suppress(OSError):
                os.unlink(listener.uds)


class ServerThread:
    """An app (and optionally its control app) served on 127.0.0.1 from a background thread.

    `url` is the app's address; `control_url` the control app's (None without one): a port, or the
    Unix socket `control_uds` (`unix:<path>`). Both apps run in the thread's one event loop.
    """

    def __init__(
        self,
        app: Any,
        port: int | None = None,
        *,
        control: Any = None,
        control_port: int | None = None,
        control_uds: Path | None = None,
    ) -> None:
        self._socket = Listener(port=port or 0).bind()
        self.port = self._socket.getsockname()[1]
        self.url = url_of(self._socket)
        self._server = _EmbeddedServer(_uvicorn_config(app))
        self._control: uvicorn.Server | None = None
        self._control_socket: socket.socket | None = None
        self._control_listener = Listener(port=control_port or 0, uds=control_uds)
        self.control_url: str | None = None
        if control is not None:
            self._control_socket = self._control_listener.bind()
            self.control_url = url_of(self._control_socket)
            self._control = _EmbeddedServer(_uvicorn_config(control))
        self._thread = threading.Thread(target=self._run, name=f"serve-{self.port}", daemon=True)

    def _run(self) -> None:
        run_loop(_serve_pair(self._server, self._socket, self._control, self._control_socket))

    def _started(self) -> bool:
        return self._server.started and (self._control is None or self._control.started)

    def start(self, timeout: float = 10.0) -> "ServerThread":
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not self._started():
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"server on port {self.port} did not start")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=10)
        if self._control_socket is not None:
            _unlink_sockets(self._control_listener)


@contextlib.contextmanager
def serve_in_thread(app: Any, port: int | None = None, *, control: Any = None) -> Iterator[ServerThread]:
    """Serve `app` (and its `control` app on a second port) for the duration of a `with` block."""
    server = ServerThread(app, port, control=control).start()
    try:
        yield server
    finally:
        server.stop()


@contextlib.asynccontextmanager
async def serve_in_task(app: Any, port: int | None = None) -> AsyncIterator[str]:
    """Serve `app` from a task of the running event loop; yields its URL.

    Request handlers then run in the caller's context, so that an `InspectUpstream` records its model
    calls in the transcript of the sample that started the proxy. The control plane needs no listener
    here: reach it in-process with `HttpProxyControl.in_process(create_control_app(app), admin_key)`.
    """
    sock = Listener(port=port or 0).bind()
    stopping = False

    async def served(scope: Any, receive: Any, send: Any) -> None:
        try:
            await app(scope, receive, send)
        except asyncio.CancelledError:
            if not stopping:
                raise  # cancelled at shutdown (below) is no error of the app's: uvicorn would log it

    server = _EmbeddedServer(_uvicorn_config(served))
    task = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        while not server.started:
            if task.done():
                task.result()
                raise RuntimeError(f"server on {url_of(sock)} did not start")
            await asyncio.sleep(0.01)
        yield url_of(sock)
    finally:
        server.should_exit = stopping = True
        # The caller is done with the server: a request still running (one whose client gave up on it,
        # or the cancelled sample's own) is cancelled, not waited for; uvicorn's graceful shutdown would
        # wait for it without bound (MCP-Atlas: a loop run past upstream's attempt timeout).
        for running in list(server.server_state.tasks):
            running.cancel()
        await task
