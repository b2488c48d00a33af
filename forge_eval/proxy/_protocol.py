"""The data plane's HTTP/1.1 server protocol: model calls served straight from httptools' parser.

uvicorn runs it (sockets, lifespan, signals, graceful shutdown: it is given as `uvicorn.Config(http=...)`),
but a model call skips uvicorn's request cycle and ASGI: the app's `model_route` picks the endpoint from
the method and path, which then reads the body and answers through an `Exchange` of this connection, each
answer one `transport.write` of head and body joined. Written here because the proxy's throughput on two
cores is bound by its CPU per call, and uvicorn's cycle (ASGI message dicts, a header list per request,
head and body written in two socket sends) took about a third of it (bench/proxy_overhead.py profiles).
Every other request (the admin, health and model-list routes, errors) goes to the ASGI app through a
small ASGI bridge on the same connection. Keep-alive, pipelining (requests queue behind the one being
answered), `Expect: 100-continue`, chunked streams and a body that stalls are handled as uvicorn does.
"""

import asyncio
import contextlib
import http
import logging
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any
from urllib.parse import unquote

import httptools
from starlette.requests import ClientDisconnect

from forge_eval.proxy._exchange import Header

logger = logging.getLogger("uvicorn.error")

Handler = Callable[["_Exchange"], Awaitable[None]]
Route = Callable[[str, str], tuple[Handler, dict[str, str]] | None]  # (method, path) -> handler, params

_STATUS = {s.value: f"HTTP/1.1 {s.value} {s.phrase}\r\n".encode() for s in http.HTTPStatus}
_HIGH_WATER = 65536  # body bytes buffered before the socket stops being read
_CONTINUE = b"HTTP/1.1 100 Continue\r\n\r\n"


def _status_line(status: int) -> bytes:
    return _STATUS.get(status) or f"HTTP/1.1 {status} \r\n".encode()


class _Exchange:
    """One request of a connection (see `Exchange`), answered by writing to the connection's transport."""

    def __init__(
        self, connection: "DataProtocol", method: str, url: bytes, raw_headers: list[Header]
    ) -> None:
        self.connection = connection
        self.method = method
        raw_path, _, self.query = url.partition(b"?")
        path = raw_path.decode("latin-1")
        self.raw_path = raw_path
        self.path = unquote(path) if "%" in path else path
        self.raw_headers = raw_headers
        self.headers: dict[str, str] = {}
        for name, value in raw_headers:  # the first of repeated headers, as Starlette's `get`
            self.headers.setdefault(name.decode("latin-1"), value.decode("latin-1"))
        self.path_params: dict[str, str] = {}
        self.keep_alive = True
        self.expect_continue = self.headers.get("expect", "").lower() == "100-continue"
        self.chunks: deque[bytes] = deque()
        self.buffered = 0
        self.more_body = True
        self.arrived: asyncio.Future[None] | None = None  # set when body bytes or the end arrive
        self.hangup_callbacks: list[Callable[[], None]] = []
        self.hung_up = False
        self.started = False  # the head went out
        self.complete = False
        self._pending_head: bytes | None = None

    # the request side
    def _wake(self) -> None:
        if self.arrived is not None and not self.arrived.done():
            self.arrived.set_result(None)

    def body_received(self, data: bytes) -> None:
        self.chunks.append(data)
        self.buffered += len(data)
        if self.buffered > _HIGH_WATER:
            self.connection.pause_reading()
        self._wake()

    def body_complete(self) -> None:
        self.more_body = False
        self._wake()

    def lost(self) -> None:
        self.hung_up = True
        self._wake()
        for callback in self.hangup_callbacks:
            callback()
        self.hangup_callbacks.clear()

    async def next_chunk(self) -> bytes | None:
        """The next part of the body; None at its end; `ClientDisconnect` when the client hung up first."""
        if self.expect_continue:
            self.expect_continue = False
            if not self.started:
                self.connection.write(_CONTINUE)
        while not self.chunks:
            if not self.more_body:
                return None
            if self.hung_up:
                raise ClientDisconnect()
            self.arrived = self.connection.loop.create_future()
            await self.arrived
        data = self.chunks.popleft()
        self.buffered -= len(data)
        if self.buffered <= _HIGH_WATER:
            self.connection.resume_reading()
        return data

    async def stream(self) -> AsyncIterator[bytes]:
        while (data := await self.next_chunk()) is not None:
            yield data

    def arrived_body(self) -> bytes | None:
        if self.more_body or self.expect_continue:
            return None
        data = b"".join(self.chunks)
        self.chunks.clear()
        self.buffered = 0
        self.connection.resume_reading()
        return data

    async def disconnected(self) -> None:
        if self.hung_up:
            return
        gone: asyncio.Future[None] = self.connection.loop.create_future()

        def hung_up() -> None:
            if not gone.done():
                gone.set_result(None)

        stop = self.on_hangup(hung_up)
        try:
            await gone
        finally:
            stop()

    def on_hangup(self, callback: Callable[[], None]) -> Callable[[], None]:
        if self.hung_up:
            handle = self.connection.loop.call_soon(callback)
            return handle.cancel
        self.hangup_callbacks.append(callback)

        def stop() -> None:
            with contextlib.suppress(ValueError):
                self.hangup_callbacks.remove(callback)

        return stop

    # the answer side
    def _head(self, status: int, headers: list[Header], framing: bytes) -> bytes:
        if self.more_body:  # the body was not read to its end: the connection cannot carry another request
            self.keep_alive = False
        parts = [_status_line(status)]
        for name, value in headers:
            parts += (name, b": ", value, b"\r\n")
        for name, value in self.connection.default_headers:
            parts += (name, b": ", value, b"\r\n")
        parts.append(framing)
        parts.append(b"\r\n" if self.keep_alive else b"connection: close\r\n\r\n")
        self.started = True
        return b"".join(parts)

    async def respond(self, status: int, headers: list[Header], body: bytes) -> None:
        head = self._head(status, headers, b"content-length: %d\r\n" % len(body))
        self.connection.write(head + body if self.method != "HEAD" else head)
        self._finish()

    async def start_stream(self, headers: list[Header], status: int = 200) -> None:
        self._pending_head = self._head(status, headers, b"transfer-encoding: chunked\r\n")

    async def send_chunk(self, data: bytes, end: bool = False) -> None:
        parts = [self._pending_head] if self._pending_head else []
        self._pending_head = None
        if data:
            parts += (b"%x\r\n" % len(data), data, b"\r\n")
        if end:
            parts.append(b"0\r\n\r\n")
        self.connection.write(b"".join(parts))
        if end:
            self._finish()

    def _finish(self) -> None:
        self.complete = True
        self.connection.answered(self)

    # ASGI, for the routes the app serves itself
    async def run_asgi(self, app: Any, scope: dict[str, Any]) -> None:
        status, headers, framed = 500, [], True
        body_read = False

        async def receive() -> dict[str, Any]:
            nonlocal body_read
            if not body_read:
                try:
                    data = await self.next_chunk()
                except ClientDisconnect:
                    return {"type": "http.disconnect"}
                body_read = data is None or (not self.more_body and not self.chunks)
                return {"type": "http.request", "body": data or b"", "more_body": not body_read}
            await self.disconnected()
            return {"type": "http.disconnect"}

        async def send(message: dict[str, Any]) -> None:
            nonlocal status, headers, framed
            if self.complete or self.hung_up:
                return
            if message["type"] == "http.response.start":
                status, headers = message["status"], list(message.get("headers", []))
                framed = any(name.lower() in (b"content-length", b"transfer-encoding") for name, _ in headers)
                return
            body, more = message.get("body", b""), message.get("more_body", False)
            if not self.started:
                if framed:  # the app framed its body itself (Content-Length, or a HEAD answer's)
                    self.connection.write(self._head(status, headers, b"") + body)
                    if not more:
                        self._finish()
                    return
                if not more:
                    await self.respond(status, headers, body)
                    return
                await self.start_stream(headers, status)
            if framed:
                self.connection.write(body)
                if not more:
                    self._finish()
            else:
                await self.send_chunk(body, end=not more)

        await app(scope, receive, send)


class DataProtocol(asyncio.Protocol):
    """One client connection (uvicorn's protocol interface: made per connection by its server)."""

    def __init__(
        self,
        config: Any,
        server_state: Any,
        app_state: dict[str, Any],
        _loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        if not config.loaded:
            config.load()
        self.app = config.loaded_app
        self.route: Route = config.app.model_route
        self.loop = _loop or asyncio.get_event_loop()
        self.server_state = server_state
        self.app_state = app_state
        self.timeout_keep_alive: float = config.timeout_keep_alive
        self.parser = httptools.HttpRequestParser(self)
        self.transport: asyncio.Transport | None = None
        self.server: tuple[str, int] | None = None
        self.client: tuple[str, int] | None = None
        self.active: _Exchange | None = None  # being answered
        self.current: _Exchange | None = None  # being parsed
        self.queued: deque[_Exchange] = deque()
        self.reading_paused = False
        self.closing = False
        self._idle_timer: asyncio.TimerHandle | None = None
        self._url = b""
        self._headers: list[Header] = []

    @property
    def default_headers(self) -> list[Header]:
        return self.server_state.default_headers

    # connection
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        self.server_state.connections.add(self)
        with contextlib.suppress(Exception):
            self.server = transport.get_extra_info("sockname")[:2]
            self.client = transport.get_extra_info("peername")[:2]

    def connection_lost(self, exc: Exception | None) -> None:
        self.server_state.connections.discard(self)
        self.closing = True
        self._cancel_idle()
        for exchange in (self.active, self.current, *self.queued):
            if exchange is not None:
                exchange.lost()
        self.queued.clear()

    def data_received(self, data: bytes) -> None:
        self._cancel_idle()
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserUpgrade:
            pass  # no protocol to upgrade to: the request is answered as plain HTTP
        except httptools.HttpParserError as e:
            if self.active is None:
                message = f"Invalid HTTP request received: {e}".encode()
                head = b"content-type: text/plain; charset=utf-8\r\ncontent-length: %d\r\n" % len(message)
                self.write(_status_line(400) + head + b"connection: close\r\n\r\n" + message)
            self.close()

    def shutdown(self) -> None:
        """The server is stopping: close now when idle, else after the answer in progress."""
        if self.active is None:
            self.close()
        else:
            self.active.keep_alive = False
            self.queued.clear()

    def close(self) -> None:
        self.closing = True
        if self.transport is not None and not self.transport.is_closing():
            self.transport.close()

    def write(self, data: bytes) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.transport.write(data)

    def pause_reading(self) -> None:
        if not self.reading_paused and self.transport is not None and not self.transport.is_closing():
            self.reading_paused = True
            self.transport.pause_reading()

    def resume_reading(self) -> None:
        if self.reading_paused and self.transport is not None and not self.transport.is_closing():
            self.reading_paused = False
            self.transport.resume_reading()

    def _cancel_idle(self) -> None:
        if self._idle_timer is not None:
            self._idle_timer.cancel()
            self._idle_timer = None

    # parser callbacks
    def on_message_begin(self) -> None:
        self._url = b""
        self._headers = []

    def on_url(self, url: bytes) -> None:
        self._url += url

    def on_header(self, name: bytes, value: bytes) -> None:
        self._headers.append((name.lower(), value))

    def on_headers_complete(self) -> None:
        method = self.parser.get_method().decode("ascii")
        exchange = _Exchange(self, method, self._url, self._headers)
        exchange.keep_alive = self.parser.should_keep_alive() and self.parser.get_http_version() != "1.0"
        self.current = exchange
        if self.active is None:
            self._start(exchange)
        else:  # pipelined: answered after the one in progress
            self.queued.append(exchange)
            self.pause_reading()

    def on_body(self, body: bytes) -> None:
        if self.current is not None:
            self.current.body_received(body)

    def on_message_complete(self) -> None:
        if self.current is not None:
            self.current.body_complete()
            self.current = None

    # answering
    def _start(self, exchange: _Exchange) -> None:
        self.active = exchange
        found = self.route(exchange.method, exchange.path)
        if found is not None:
            handler, exchange.path_params = found
            work = handler(exchange)
        else:
            work = exchange.run_asgi(self.app, self._scope(exchange))
        task = self.loop.create_task(self._run(exchange, work))
        self.server_state.tasks.add(task)
        task.add_done_callback(self.server_state.tasks.discard)

    def _scope(self, exchange: _Exchange) -> dict[str, Any]:
        return {
            "type": "http",
            "asgi": {"version": "3.0", "spec_version": "2.3"},
            "http_version": "1.1",
            "server": self.server,
            "client": self.client,
            "scheme": "http",
            "method": exchange.method,
            "root_path": "",
            "path": exchange.path,
            "raw_path": exchange.raw_path,
            "query_string": exchange.query,
            "headers": exchange.raw_headers,
            "state": self.app_state.copy(),
        }

    async def _run(self, exchange: _Exchange, work: Awaitable[None]) -> None:
        try:
            await work
        except ClientDisconnect:
            pass
        except Exception:
            logger.exception("Exception in the proxy's handling of %s %s", exchange.method, exchange.path)
        finally:
            if not exchange.complete:  # ended without a whole answer: nothing can follow on this connection
                exchange.keep_alive = False
                exchange.complete = True
                self.answered(exchange)

    def answered(self, exchange: _Exchange) -> None:
        """The answer to `exchange` is written: close, start the next pipelined request, or wait idle."""
        self.server_state.total_requests += 1
        if self.active is exchange:
            self.active = None
        if not exchange.keep_alive:
            self.close()
            return
        if self.closing:
            return
        self.resume_reading()
        if self.queued:
            self._start(self.queued.popleft())
        else:
            self._idle_timer = self.loop.call_later(self.timeout_keep_alive, self.close)
