"""The data plane's own HTTP/1.1 protocol (`_protocol.DataProtocol`), spoken to over raw sockets: what a
client may send besides one plain request per connection, and one socket write per answer."""

import asyncio
import json
import socket
from types import SimpleNamespace

import httptools
import pytest

from forge_eval.proxy import read_calls
from forge_eval.proxy._protocol import DataProtocol

CHAT = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}


class _Answers:
    """The answers read back from a connection, parsed by httptools."""

    def __init__(self) -> None:
        self.parser = httptools.HttpResponseParser(self)
        self.done: list[tuple[int, dict[str, str], bytes]] = []
        self._headers: dict[str, str] = {}
        self._body = b""

    def on_message_begin(self) -> None:
        self._headers, self._body = {}, b""

    def on_header(self, name: bytes, value: bytes) -> None:
        self._headers[name.decode().lower()] = value.decode()

    def on_body(self, body: bytes) -> None:
        self._body += body

    def on_message_complete(self) -> None:
        self.done.append((self.parser.get_status_code(), self._headers, self._body))


def _request(path: str, key: str, body: dict | None = None, version: str = "1.1", **headers: str) -> bytes:
    data = json.dumps(body).encode() if body is not None else b""
    head = f"{'POST' if body is not None else 'GET'} {path} HTTP/{version}\r\nHost: proxy\r\n"
    head += f"Authorization: Bearer {key}\r\n"
    if body is not None:
        head += f"Content-Type: application/json\r\nContent-Length: {len(data)}\r\n"
    head += "".join(f"{k.replace('_', '-')}: {v}\r\n" for k, v in headers.items())
    return head.encode() + b"\r\n" + data


def _exchange(url: str, data: bytes, answers: int) -> tuple[list, bool]:
    """Send `data` on one connection; the first `answers` answers, and whether the server then closed."""
    host, port = url.removeprefix("http://").split(":")
    parsed = _Answers()
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(data)
        closed = False
        while len(parsed.done) < answers:
            chunk = sock.recv(65536)
            if not chunk:
                closed = True
                break
            parsed.parser.feed_data(chunk)
        if not closed:
            sock.settimeout(0.3)
            try:
                closed = sock.recv(1) == b""
            except TimeoutError:
                closed = False
    return parsed.done, closed


def test_pipelined_calls_are_answered_in_order_on_one_kept_alive_connection(proxy):
    """A model call, an ASGI route and a streamed call sent at once: three answers in order, the records
    in order, and the connection stays open for more."""
    key = proxy.rollout("pipe")["api_key"]
    data = _request("/v1/chat/completions", key, CHAT)
    data += _request("/healthz", key)
    data += _request("/r/pipe/0/v1/chat/completions", key, {**CHAT, "stream": True})
    answers, closed = _exchange(proxy.url, data, 3)
    assert [status for status, _, _ in answers] == [200, 200, 200]
    assert json.loads(answers[0][2])["object"] == "chat.completion"
    assert json.loads(answers[1][2])["status"] == "ok"
    assert answers[2][1]["transfer-encoding"] == "chunked"
    assert answers[2][2].rstrip().endswith(b"data: [DONE]")
    assert not closed
    calls = read_calls(proxy.records, "pipe")
    assert [c.seq for c in calls] == [0, 1] and [c.stream for c in calls] == [False, True]


def test_expect_100_continue_and_a_chunked_request_body(proxy):
    key = proxy.rollout("expect")["api_key"]
    body = json.dumps(CHAT).encode()
    host, port = proxy.url.removeprefix("http://").split(":")
    head = (
        "POST /v1/chat/completions HTTP/1.1\r\nHost: proxy\r\n"
        f"Authorization: Bearer {key}\r\nContent-Type: application/json\r\n"
        "Expect: 100-continue\r\nTransfer-Encoding: chunked\r\n\r\n"
    )
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(head.encode())
        assert sock.recv(65536).startswith(b"HTTP/1.1 100 Continue\r\n\r\n")
        half = len(body) // 2
        for part in (body[:half], body[half:]):
            sock.sendall(b"%x\r\n%s\r\n" % (len(part), part))
        sock.sendall(b"0\r\n\r\n")
        parsed = _Answers()
        while not parsed.done:
            parsed.parser.feed_data(sock.recv(65536))
    assert parsed.done[0][0] == 200
    assert read_calls(proxy.records, "expect")[0].original_request == CHAT


def test_http_1_0_and_connection_close_end_the_connection_after_the_answer(proxy):
    key = proxy.rollout("close")["api_key"]
    for data in (
        _request("/v1/chat/completions", key, CHAT, version="1.0"),
        _request("/v1/chat/completions", key, CHAT, Connection="close"),
    ):
        answers, closed = _exchange(proxy.url, data, 1)
        assert answers[0][0] == 200 and answers[0][1]["connection"] == "close" and closed


def test_what_is_not_http_gets_a_400_and_the_connection_closed(proxy):
    answers, closed = _exchange(proxy.url, b"HELLO THERE\r\n\r\n", 1)
    assert answers[0][0] == 400 and closed


def test_each_answer_is_one_socket_write():
    """Head and body of an answer, JSON or a whole stream, go out in one `transport.write` (two writes a
    call cost ~12% of the proxy's CPU under uvicorn's protocol)."""

    class Transport:
        def __init__(self) -> None:
            self.writes: list[bytes] = []

        def write(self, data: bytes) -> None:
            self.writes.append(data)

        def is_closing(self) -> bool:
            return False

        def get_extra_info(self, name: str) -> tuple[str, int]:
            return ("127.0.0.1", 1)

        def close(self) -> None:
            pass

    async def json_answer(exchange) -> None:
        body = b"".join([chunk async for chunk in exchange.stream()])
        await exchange.respond(200, [(b"content-type", b"application/json")], body)

    async def stream_answer(exchange) -> None:
        await exchange.start_stream([(b"content-type", b"text/event-stream")])
        await exchange.send_chunk(b"data: x\n\n", end=True)

    routes = {"/json": json_answer, "/stream": stream_answer}

    async def run() -> list[bytes]:
        state = SimpleNamespace(connections=set(), tasks=set(), default_headers=[], total_requests=0)
        config = SimpleNamespace(
            loaded=True,
            loaded_app=None,
            app=SimpleNamespace(model_route=lambda method, path: (routes[path], {})),
            timeout_keep_alive=5,
        )
        protocol = DataProtocol(config, state, {})
        transport = Transport()
        protocol.connection_made(transport)  # type: ignore[arg-type]
        for path in ("/json", "/stream"):
            protocol.data_received(f"POST {path} HTTP/1.1\r\nContent-Length: 2\r\n\r\n{{}}".encode())
            await asyncio.gather(*state.tasks)
        protocol.connection_lost(None)
        return transport.writes

    writes = asyncio.run(run())
    assert len(writes) == 2
    assert writes[0].startswith(b"HTTP/1.1 200 OK\r\n") and writes[0].endswith(b"\r\n\r\n{}")
    assert b"transfer-encoding: chunked" in writes[1] and writes[1].endswith(b"data: x\n\n\r\n0\r\n\r\n")


@pytest.mark.parametrize("path", ["/v1/chat/completions", "/r/x/0/v1/messages"])
def test_model_calls_are_routed_by_the_app_and_the_rest_left_to_asgi(proxy, path):
    route = proxy.app.model_route
    assert route("POST", path) is not None
    assert route("GET", path) is None
    assert route("POST", "/v1/models") is None and route("POST", "/r/x/0/v2/chat/completions") is None
