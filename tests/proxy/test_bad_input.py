"""Bad input gets the right status and an error body in the API's own format; the server keeps serving."""

import gzip
import json
import socket
import time

import httpx
import pytest
import zstandard

from forge_eval.proxy import read_calls
from tests.proxy.conftest import ADMIN_KEY

# API path -> (how its error body names the error type)
APIS = {
    "/v1/chat/completions": lambda body: body["error"]["type"],
    "/v1/responses": lambda body: body["error"]["type"],
    "/v1/completions": lambda body: body["error"]["type"],
    "/v1/messages": lambda body: body["error"]["type"] if body.get("type") == "error" else None,
}
VALID = {
    "/v1/chat/completions": {"model": "forge-a", "messages": [{"role": "user", "content": "hi"}]},
    "/v1/responses": {"model": "forge-a", "input": "hi"},
    "/v1/completions": {"model": "forge-a", "prompt": "hi"},
    "/v1/messages": {"model": "forge-a", "max_tokens": 8, "messages": [{"role": "user", "content": "hi"}]},
}


@pytest.fixture
def strict(make_proxy, scripted):
    proxy = make_proxy(max_body_bytes=2000, model_aliases=["forge-*"])
    return proxy, proxy.rollout("bad")["api_key"]


def post(proxy, key, path, content: bytes, content_type="application/json", **headers) -> httpx.Response:
    headers = {"Authorization": f"Bearer {key}", "content-type": content_type, **headers}
    return httpx.post(proxy.url + path, content=content, headers=headers, timeout=30)


@pytest.mark.parametrize("path", list(APIS))
def test_bad_requests_get_the_right_status_in_the_api_format(strict, path):
    proxy, key = strict
    error_type = APIS[path]
    cases = [
        (b'{"model": "forge-a", "messages": [', "application/json", 400, "invalid_request_error"),
        (b"[1, 2]", "application/json", 400, "invalid_request_error"),
        (b"{}", "application/json", 400, "invalid_request_error"),
        (json.dumps(VALID[path]).encode(), "text/plain", 415, "invalid_request_error"),
        (json.dumps({**VALID[path], "model": "gpt-4o"}).encode(), "application/json", 404, "not_found_error"),
        (json.dumps({**VALID[path], "pad": "x" * 3000}).encode(), "application/json", 413, None),
    ]
    for content, content_type, status, kind in cases:
        answer = post(proxy, key, path, content, content_type)
        assert answer.status_code == status, (content[:40], answer.text)
        body = answer.json()
        if kind:
            assert error_type(body) == kind, body
        message = body["error"]["message"]
        assert message and "Traceback" not in message
    assert post(proxy, key, path, json.dumps(VALID[path]).encode()).status_code == 200  # still serving
    assert len(read_calls(proxy.records, "bad")) == 1


def test_oversized_streamed_body_without_length_is_cut_off(strict):
    proxy, key = strict

    def chunks():
        yield b'{"model": "forge-a", "messages": [{"role": "user", "content": "'
        for _ in range(10):
            yield b"x" * 500
        yield b'"}]}'

    answer = httpx.post(
        proxy.url + "/v1/chat/completions",
        content=chunks(),
        headers={"Authorization": f"Bearer {key}", "content-type": "application/json"},
    )
    assert answer.status_code == 413 and answer.json()["error"]["code"] == "request_too_large"


def test_compressed_bodies(strict):
    proxy, key = strict
    body = json.dumps(VALID["/v1/responses"]).encode()
    assert post(
        proxy, key, "/v1/responses", zstandard.compress(body), **{"content-encoding": "zstd"}
    ).is_success
    assert post(proxy, key, "/v1/responses", gzip.compress(body), **{"content-encoding": "gzip"}).is_success
    broken = post(proxy, key, "/v1/responses", b"not zstd", **{"content-encoding": "zstd"})
    assert broken.status_code == 400 and "zstd" in broken.json()["error"]["message"]
    bomb = zstandard.compress(json.dumps({**VALID["/v1/responses"], "pad": "x" * 50_000}).encode())
    assert len(bomb) < 2000
    assert post(proxy, key, "/v1/responses", bomb, **{"content-encoding": "zstd"}).status_code == 413
    assert post(proxy, key, "/v1/responses", body, **{"content-encoding": "br"}).status_code == 415


def test_malformed_fields_name_the_field(strict):
    proxy, key = strict
    cases = {
        "/v1/chat/completions": {"model": "forge-a", "messages": [{"content": "no role"}]},
        "/v1/messages": {
            "model": "forge-a",
            "max_tokens": -1,
            "messages": [{"role": "user", "content": "x"}],
        },
        "/v1/responses": {"model": "forge-a", "input": [{"type": "telepathy"}]},
        "/v1/completions": {"model": "forge-a", "prompt": ["a", "b"]},
    }
    expected = {
        "/v1/chat/completions": "messages[0]",
        "/v1/messages": "max_tokens",
        "/v1/responses": "telepathy",
        "/v1/completions": "prompt",
    }
    for path, body in cases.items():
        answer = post(proxy, key, path, json.dumps(body).encode())
        assert answer.status_code == 400
        assert expected[path] in answer.json()["error"]["message"]


def test_unknown_routes_and_methods(strict):
    proxy, key = strict
    assert httpx.get(proxy.url + "/v1/chat/completions").status_code == 405
    missing = httpx.post(proxy.url + "/v2/chat", json={})
    assert missing.status_code == 404 and "no route" in missing.json()["error"]["message"]
    assert httpx.get(proxy.url + "/healthz").json()["status"] == "ok"


def _stalled_request(url: str, path: str, key: str) -> tuple[bytes, float]:
    """Headers promising 100 bytes, then 10 bytes and silence: (everything the server sent until it closed
    the connection, seconds that took)."""
    host, port = url.removeprefix("http://").split(":")
    head = (
        f"POST {path} HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {key}\r\n"
        "Content-Type: application/json\r\nContent-Length: 100\r\n\r\n"
    )
    started = time.monotonic()
    with socket.create_connection((host, int(port)), timeout=15) as sock:
        sock.sendall(head.encode() + b'{"model": ')
        received = b""
        while chunk := sock.recv(65536):  # b"" once the server closes; socket.timeout if it never does
            received += chunk
    return received, time.monotonic() - started


def test_a_body_that_stalls_half_sent_is_cut_off_and_its_connection_closed(make_proxy, scripted):
    proxy = make_proxy(body_timeout_s=0.5)
    key = proxy.rollout("stall")["api_key"]
    for url, path in ((proxy.url, "/v1/chat/completions"), (proxy.control_url, "/rollouts")):
        received, took = _stalled_request(url, path, key if url == proxy.url else ADMIN_KEY)
        assert received.startswith(b"HTTP/1.1 408"), received[:200]
        assert b"did not arrive within 0.5 s" in received and took < 10
    chat = "/v1/chat/completions"
    assert post(proxy, key, chat, json.dumps(VALID[chat]).encode()).is_success
