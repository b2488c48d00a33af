"""The proxy's upstream HTTP client against a raw TCP server that answers as real servers do (keep-alive,
chunked, until-close, gzip, idle connections closed, a server that never answers)."""

import asyncio
import gzip
from collections.abc import Awaitable, Callable

import pytest

from forge_eval.proxy._http_client import HttpClient, HttpClientError

Handler = Callable[[bytes], Awaitable[tuple[bytes, bool]]]  # request head+body -> (raw answer, then close)


class RawServer:
    """A TCP server that reads one request at a time (Content-Length bodies) and writes a raw answer."""

    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.connections = 0
        self.requests: list[bytes] = []
        self.writers: list[asyncio.StreamWriter] = []

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        self.writers.append(writer)
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = next(
                    (
                        int(line.split(b":")[1])
                        for line in head.split(b"\r\n")
                        if line.lower().startswith(b"content-length")
                    ),
                    0,
                )
                request = head + await reader.readexactly(length)
                self.requests.append(request)
                answer, close = await self.handler(request)
                writer.write(answer)
                await writer.drain()
                if close:
                    break
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    async def __aenter__(self) -> str:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        return f"http://127.0.0.1:{self.server.sockets[0].getsockname()[1]}"

    async def __aexit__(self, *exc: object) -> None:
        self.server.close()
        for writer in self.writers:
            writer.close()


def _json_answer(body: bytes, extra: bytes = b"") -> bytes:
    return b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n%s\r\n%s" % (
        len(body),
        extra,
        body,
    )


def test_connections_are_kept_alive_and_every_answer_framing_is_read() -> None:
    async def handler(request: bytes) -> tuple[bytes, bool]:
        if b"/chunked" in request:
            return (
                b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n",
                False,
            )
        if b"/gzip" in request:
            packed = gzip.compress(b'{"packed": true}')
            return _json_answer(packed, b"Content-Encoding: gzip\r\n"), False
        if b"/until-close" in request:
            return b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nthe rest", True
        return _json_answer(b'{"ok": 1}'), False

    async def run() -> None:
        server = RawServer(handler)
        async with server as url:
            client = HttpClient({"Authorization": "Bearer k"})
            for _ in range(5):
                answer = await client.request("POST", url + "/v1/chat/completions", b"{}", 5)
                assert (answer.status, answer.body) == (200, b'{"ok": 1}')
            assert server.connections == 1  # one keep-alive connection for five calls
            assert (await client.request("POST", url + "/chunked", b"{}", 5)).body == b"abcde"
            assert (await client.request("GET", url + "/gzip", None, 5)).body == b'{"packed": true}'
            assert (await client.request("POST", url + "/until-close", b"{}", 5)).body == b"the rest"
            assert (await client.request("POST", url + "/v1/x", b"{}", 5)).body == b'{"ok": 1}'
            assert server.connections == 2  # the until-close answer's connection was not reused
            first = server.requests[0]
            assert first.startswith(b"POST /v1/chat/completions HTTP/1.1\r\n")
            assert b"Authorization: Bearer k\r\n" in first and first.endswith(b"\r\n\r\n{}")
            await client.aclose()

    asyncio.run(run())


def test_an_idle_connection_the_server_closed_is_replaced_without_an_error() -> None:
    async def handler(request: bytes) -> tuple[bytes, bool]:
        return _json_answer(b"{}", b"Connection: keep-alive\r\n"), False

    async def run() -> None:
        server = RawServer(handler)
        async with server as url:
            client = HttpClient()
            await client.request("POST", url + "/a", b"{}", 5)
            for writer in server.writers:  # as uvicorn does after 5 s idle
                writer.close()
            await asyncio.sleep(0.05)
            assert (await client.request("POST", url + "/a", b"{}", 5)).status == 200
            assert server.connections == 2
            await client.aclose()

    asyncio.run(run())


def test_refused_silent_and_broken_servers_are_clear_errors() -> None:
    async def silent(request: bytes) -> tuple[bytes, bool]:
        await asyncio.sleep(30)
        return b"", True

    async def garbage(request: bytes) -> tuple[bytes, bool]:
        return b"this is not HTTP\r\n\r\n", False

    async def run() -> None:
        client = HttpClient()
        async with RawServer(silent) as url:
            with pytest.raises(TimeoutError):
                await client.request("POST", url + "/a", b"{}", 0.2)
        with pytest.raises(HttpClientError, match="cannot connect"):
            await client.request("POST", url + "/a", b"{}", 5)  # that server is gone
        async with RawServer(garbage) as url:
            with pytest.raises(HttpClientError, match="not valid HTTP"):
                await client.request("POST", url + "/a", b"{}", 5)
        with pytest.raises(HttpClientError, match="not an http"):
            await client.request("POST", "ftp://example.org/a", b"{}", 5)
        await client.aclose()

    asyncio.run(run())


def test_an_answer_that_stalls_on_a_reused_connection_times_out_and_the_pool_recovers() -> None:
    """The time limit of a request on a kept-alive connection is checked by the client's one periodic timer
    (no timer per request): it still fires, about on time, and the stalled connection is not reused."""
    calls = 0

    async def second_stalls(request: bytes) -> tuple[bytes, bool]:
        nonlocal calls
        calls += 1
        if calls == 2:
            await asyncio.sleep(30)
        return _json_answer(b'{"n": %d}' % calls), False

    async def run() -> None:
        client = HttpClient()
        loop = asyncio.get_running_loop()
        async with RawServer(second_stalls) as url:
            first = await client.request("POST", url + "/a", b"{}", 5)
            t0 = loop.time()
            with pytest.raises(TimeoutError):
                await client.request("POST", url + "/a", b"{}", 0.3)
            waited = loop.time() - t0
            third = await client.request("POST", url + "/a", b"{}", 5)
        await client.aclose()
        assert first.body == b'{"n": 1}' and third.body == b'{"n": 3}'
        assert 0.3 <= waited < 1.0

    asyncio.run(run())
