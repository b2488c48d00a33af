"""A pooled HTTP/1.1 client for the proxy's upstream calls: keep-alive connections parsed by httptools.

Written here rather than taken from aiohttp (the fastest maintained client installed) because aiohttp spends
~0.2 ms of CPU per call on its request machinery (timer contexts, tracing hooks, header multidicts, payload
objects), a quarter of the proxy's whole cost per call, where this client spends ~0.07 ms (measured side by
side against the same upstream; bench/proxy_overhead.py shows the proxy's CPU per call). An inference server
needs little: a JSON body POSTed (or a GET) to a base URL, keep-alive reuse, Content-Length, chunked or
until-close answers, TLS, a time limit. HTTP parsing is httptools' (llhttp, uvicorn's parser too).
"""

import asyncio
import ssl
import zlib
from collections import deque
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import httptools

MAX_PER_ORIGIN = 256  # connections open to one server at once; more calls wait for one to come free
CONNECT_TIMEOUT_S = 10.0
_TICK_S = 0.05  # how often the time limits of answers in flight are checked (how late one may fire)


class HttpClientError(Exception):
    """The server could not be reached, hung up, or sent something that is not HTTP."""


@dataclass
class HttpAnswer:
    status: int
    headers: dict[str, str]  # names lower-case
    body: bytes


@dataclass(frozen=True)
class _Target:
    """A URL split once: where to connect and the start of the request head."""

    origin: tuple[str, str, int]  # scheme, host, port
    head: bytes  # request line and fixed headers, up to (not including) Content-Length


class _Connection(asyncio.Protocol):
    """One keep-alive connection; one request at a time."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.parser = httptools.HttpResponseParser(self)
        self.waiter: asyncio.Future[HttpAnswer] | None = None
        self.closed = False
        self.deadline = 0.0  # loop time by which the answer in flight must be in (`HttpClient` checks it)
        self.generation = 0
        self.reusable = False
        self.received = False
        self._headers: dict[str, str] = {}
        self._body: list[bytes] = []
        self._headers_done = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self.received = True
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserError as e:
            self._fail(HttpClientError(f"the upstream's answer is not valid HTTP: {e}"))
            self.close()

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        if self._headers_done and "content-length" not in self._headers and not self._chunked():
            self._complete()  # an answer delimited by the end of the connection
            return
        reason = f": {exc}" if exc else ""
        self._fail(HttpClientError(f"the upstream closed the connection before answering{reason}"))

    def on_header(self, name: bytes, value: bytes) -> None:
        self._headers[name.decode("latin-1").lower()] = value.decode("latin-1")

    def on_headers_complete(self) -> None:
        self._headers_done = True

    def on_body(self, body: bytes) -> None:
        self._body.append(body)

    def on_message_complete(self) -> None:
        self.reusable = self.parser.should_keep_alive()
        self._complete()

    def _chunked(self) -> bool:
        return "chunked" in self._headers.get("transfer-encoding", "").lower()

    def _complete(self) -> None:
        waiter, self.waiter = self.waiter, None
        if waiter is not None and not waiter.done():
            body = b"".join(self._body)
            encoding = self._headers.get("content-encoding", "identity").lower()
            if encoding in ("gzip", "deflate"):  # not asked for, but a server may send it anyway
                try:
                    body = zlib.decompress(body, wbits=47)
                except zlib.error as e:
                    waiter.set_exception(HttpClientError(f"the upstream's {encoding} body is corrupt: {e}"))
                    return
            waiter.set_result(HttpAnswer(self.parser.get_status_code(), self._headers, body))

    def _fail(self, error: Exception) -> None:
        waiter, self.waiter = self.waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_exception(error)

    def send(self, data: bytes) -> "asyncio.Future[HttpAnswer]":
        assert self.transport is not None
        self.waiter = asyncio.get_running_loop().create_future()
        self.received = self.reusable = self._headers_done = False
        self._headers, self._body = {}, []
        self.transport.write(data)
        return self.waiter

    def close(self) -> None:
        self.closed = True
        if self.transport is not None:
            self.transport.close()

    def time_out(self) -> None:
        self._fail(TimeoutError())
        self.close()


class HttpClient:
    """Requests to any number of servers, each over a pool of keep-alive connections.

    A connection is reused only after a whole answer that allows it; one the server closed while idle is
    dropped, and a request that finds its reused connection closed before any answer byte is sent once
    more on a new one (the server never saw it, or dropped it unread: uvicorn, vLLM's server, closes idle
    connections after 5 s). Errors: `HttpClientError` (transport), `TimeoutError`.
    """

    def __init__(self, headers: dict[str, str] | None = None) -> None:
        extra = {"User-Agent": "forge-eval-proxy", "Accept-Encoding": "identity", **(headers or {})}
        self._extra = "".join(f"{k}: {v}\r\n" for k, v in extra.items())
        self._targets: dict[tuple[str, str], _Target] = {}
        self._idle: dict[tuple[str, str, int], deque[_Connection]] = {}
        self._slots: dict[tuple[str, str, int], asyncio.Semaphore] = {}
        self._tls: ssl.SSLContext | None = None
        self._generation = 0  # bumped by `aclose`: connections of an earlier one are not pooled again
        self._in_flight: set[_Connection] = set()  # connections awaiting an answer (`_check`)
        self._ticking: asyncio.TimerHandle | None = None
        self._ticking_loop: asyncio.AbstractEventLoop | None = None  # an app served again has a new loop

    def _target(self, method: str, url: str) -> _Target:
        target = self._targets.get((method, url))
        if target is None:
            parts = urlsplit(url)
            if parts.scheme not in ("http", "https") or not parts.hostname:
                raise HttpClientError(f"not an http(s) URL: {url!r}")
            port = parts.port or (443 if parts.scheme == "https" else 80)
            path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
            host = parts.netloc.rpartition("@")[2]
            head = f"{method} {path} HTTP/1.1\r\nHost: {host}\r\n{self._extra}"
            target = _Target((parts.scheme, parts.hostname, port), head.encode("latin-1"))
            if len(self._targets) < 1024:  # a proxy talks to a handful of endpoints
                self._targets[(method, url)] = target
        return target

    async def request(
        self,
        method: str,
        url: str,
        body: bytes | None,
        timeout: float,
        content_type: str = "application/json",
    ) -> HttpAnswer:
        """One request; the whole exchange (waiting for a connection included) within `timeout` s."""
        target = self._target(method, url)
        data = target.head
        if body is not None:
            data += f"Content-Type: {content_type}\r\nContent-Length: {len(body)}\r\n\r\n".encode() + body
        else:
            data += b"\r\n"
        origin = target.origin
        slots = self._slots.get(origin)
        if slots is None:
            slots = self._slots[origin] = asyncio.Semaphore(MAX_PER_ORIGIN)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        if slots.locked():
            async with asyncio.timeout_at(deadline):
                await slots.acquire()
        else:
            await slots.acquire()  # free: no wait, so no timer
        try:
            connection = self._take(origin)
            if connection is not None:
                try:
                    return self._settle(
                        origin, connection, await self._answer(loop, connection, data, deadline)
                    )
                except HttpClientError:
                    if connection.received:
                        raise
                    connection.close()  # closed while idle: send it once more, on a new connection
                except BaseException:
                    connection.close()  # cancelled or timed out mid-answer: the connection is unusable
                    raise
            async with asyncio.timeout_at(deadline):
                connection = await self._open(origin)
            try:
                return self._settle(origin, connection, await self._answer(loop, connection, data, deadline))
            except BaseException:
                connection.close()
                raise
        finally:
            slots.release()

    async def _answer(
        self, loop: asyncio.AbstractEventLoop, connection: _Connection, data: bytes, deadline: float
    ) -> HttpAnswer:
        """The answer to `data`, by `deadline` (`TimeoutError`). One timer of the client checks every answer
        in flight each `_TICK_S`, rather than a timer per request: with uvloop, `asyncio.timeout` costs
        ~10 µs and `call_at` ~4 µs a request, 1-3% of the proxy's CPU per call."""
        if self._ticking_loop is not loop:  # those in flight on an earlier loop will never be answered
            self._in_flight, self._ticking, self._ticking_loop = set(), None, loop
        connection.deadline = deadline
        self._in_flight.add(connection)
        if self._ticking is None:
            self._ticking = loop.call_later(_TICK_S, self._check, loop)
        try:
            return await connection.send(data)
        finally:
            self._in_flight.discard(connection)

    def _check(self, loop: asyncio.AbstractEventLoop) -> None:
        now = loop.time()
        for connection in [c for c in self._in_flight if c.deadline <= now]:
            self._in_flight.discard(connection)
            connection.time_out()
        self._ticking = loop.call_later(_TICK_S, self._check, loop) if self._in_flight else None

    def _take(self, origin: tuple[str, str, int]) -> _Connection | None:
        idle = self._idle.get(origin)
        while idle:
            connection = idle.pop()
            if not connection.closed:
                return connection
        return None

    def _settle(
        self, origin: tuple[str, str, int], connection: _Connection, answer: HttpAnswer
    ) -> HttpAnswer:
        if connection.reusable and not connection.closed and connection.generation == self._generation:
            self._idle.setdefault(origin, deque()).append(connection)
        else:
            connection.close()
        return answer

    async def _open(self, origin: tuple[str, str, int]) -> _Connection:
        scheme, host, port = origin
        tls: Any = None
        if scheme == "https":
            self._tls = self._tls or ssl.create_default_context()
            tls = self._tls
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(CONNECT_TIMEOUT_S):
                _, connection = await loop.create_connection(
                    _Connection, host, port, ssl=tls, server_hostname=host if tls else None
                )
        except OSError as e:  # refused, unreachable, TLS handshake failed (ssl.SSLError is an OSError)
            raise HttpClientError(f"cannot connect to {host}:{port}: {e}") from None
        connection.generation = self._generation
        return connection

    async def aclose(self) -> None:
        """Close the idle connections (those in use close when their answer is in). The client stays
        usable, with new connections: an app served again runs on a new event loop."""
        self._generation += 1
        if self._ticking is not None:
            self._ticking.cancel()
            self._ticking = None
        for idle in self._idle.values():
            while idle:
                idle.pop().close()
        self._idle.clear()
        self._slots.clear()
