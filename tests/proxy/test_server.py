"""The proxy server over a real scripted upstream: keying, control plane, retries, streaming, records."""

import asyncio
import os
import subprocess
import sys
import threading
import time

import anthropic
import httpx
import openai
import pytest

from forge_eval.proxy import ScriptedUpstream, free_port, read_calls, read_rollout, serve_in_thread
from forge_eval.proxy._server import run_loop
from tests.proxy._sse import parse_sse

TASK = [{"role": "user", "content": "create hello.txt containing hi"}]
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "exec",
            "parameters": {"type": "object", "properties": {"command": {"type": "string"}}},
        },
    }
]


def chat(url: str, key: str = "x", **body) -> httpx.Response:
    body = {"model": "forge-policy", "messages": TASK, **body}
    return httpx.post(
        url + "/v1/chat/completions", json=body, headers={"Authorization": f"Bearer {key}"}, timeout=30
    )


def messages(url: str, key: str = "x", **body) -> httpx.Response:
    body = {"model": "claude-x", "max_tokens": 64, "messages": TASK, **body}
    return httpx.post(url + "/v1/messages", json=body, headers={"x-api-key": key}, timeout=30)


def test_calls_are_keyed_by_path_or_signed_key(proxy):
    a = proxy.rollout("ra", group_uid="g1")
    b = proxy.rollout("rb")
    assert chat(proxy.url + a["base_path"]).status_code == 200
    assert chat(proxy.url, a["api_key"]).status_code == 200
    assert messages(proxy.url, b["api_key"]).status_code == 200
    assert [c.seq for c in read_calls(proxy.records, "ra")] == [0, 1]
    assert read_calls(proxy.records, "ra")[0].group_uid == "g1"
    assert [c.api for c in read_calls(proxy.records, "rb")] == ["anthropic_messages"]

    forged = a["api_key"][:-4] + "0000"
    refusals = [
        chat(proxy.url),  # no rollout at all: there is no default rollout
        chat(proxy.url, forged),
        chat(proxy.url + "/r/nobody/0"),
        chat(proxy.url + a["base_path"], b["api_key"]),  # key of another rollout than the path
        chat(proxy.url, "fk.ra.1." + a["api_key"].split(".")[-1]),  # signature of attempt 0 used for 1
    ]
    for answer in refusals:
        assert answer.status_code == 401, answer.text
        assert answer.json()["error"]["type"] == "authentication_error"
    anthropic_refusal = messages(proxy.url, forged)
    assert anthropic_refusal.status_code == 401
    assert anthropic_refusal.json() == {
        "type": "error",
        "error": {"type": "authentication_error", "message": anthropic_refusal.json()["error"]["message"]},
    }
    assert len(read_calls(proxy.records, "ra")) == 2  # refused calls leave no record


def test_sdk_clients_stream_and_not_through_every_api(proxy):
    created = proxy.rollout("sdk", sampling={"temperature": 0.2})
    oa = openai.OpenAI(base_url=proxy.url + created["base_path"] + "/v1", api_key="unused")
    an = anthropic.Anthropic(base_url=proxy.url, api_key=created["api_key"])
    plain = oa.chat.completions.create(model="m", messages=TASK, tools=TOOLS, temperature=1.5)
    streamed = list(oa.chat.completions.create(model="m", messages=TASK, tools=TOOLS, stream=True))
    assert plain.choices[0].message.tool_calls[0].function.arguments == "".join(
        c.choices[0].delta.tool_calls[0].function.arguments or ""
        for c in streamed
        if c.choices[0].delta.tool_calls
    )
    tools = [{"name": "exec", "input_schema": TOOLS[0]["function"]["parameters"]}]
    message = an.messages.create(model="claude-haiku", max_tokens=50, messages=TASK, tools=tools)
    with an.messages.stream(model="claude-haiku", max_tokens=50, messages=TASK, tools=tools) as stream:
        final = stream.get_final_message()
    assert message.content[0].input == final.content[0].input == {"command": "printf '%s' hi > hello.txt"}
    response = oa.responses.create(model="gpt-x", input="create a.txt containing b")
    events = list(oa.responses.create(model="gpt-x", input="create a.txt containing b", stream=True))
    assert response.output_text == events[-1].response.output_text == "Run: printf '%s' b > a.txt"
    completion = oa.completions.create(model="m", prompt="one two three")
    assert completion.choices[0].text == " [3 words]"

    calls = read_calls(proxy.records, "sdk")
    assert [(c.api, c.stream) for c in calls] == [
        ("chat", False),
        ("chat", True),
        ("anthropic_messages", False),
        ("anthropic_messages", True),
        ("responses", False),
        ("responses", True),
        ("completions", False),
    ]
    assert [c.model_alias for c in calls[:4]] == ["m", "m", "claude-haiku", "claude-haiku"]
    assert calls[0].original_request["temperature"] == 1.5 and calls[0].served_request["temperature"] == 0.2
    assert all(c.prompt_token_ids and c.completion_token_ids and c.completion_logprobs for c in calls)
    assert len(calls[0].completion_token_ids) == len(calls[0].completion_logprobs)
    assert calls[0].served_request["return_token_ids"] is True
    assert all(c.t_received <= c.t_upstream_start <= c.t_upstream_end <= c.t_delivered for c in calls)


def test_control_plane_lifecycle(proxy):
    first = proxy.admin("POST", "/rollouts", json={"rollout_id": "life", "group_uid": "g", "mode": "eval"})
    again = proxy.admin("POST", "/rollouts", json={"rollout_id": "life", "group_uid": "other"})
    assert (first.status_code, again.status_code) == (201, 200)
    assert again.json()["rollout"]["group_uid"] == "g" and again.json()["api_key"] == first.json()["api_key"]
    assert httpx.post(proxy.control_url + "/rollouts", json={"rollout_id": "x"}).status_code == 401
    assert proxy.admin("POST", "/rollouts", json={"rollout_id": "bad/id"}).status_code == 400
    assert proxy.admin("POST", "/rollouts", json={"rollout_id": "x", "mode": "play"}).status_code == 400
    key = first.json()["api_key"]
    assert chat(proxy.url, key).status_code == 200
    assert proxy.admin(
        "POST", "/rollouts/life/reward", json={"reward": 0.75, "verifier_output": {"ok": 1}}
    ).is_success
    assert proxy.admin("POST", "/rollouts/life/status", json={"status": "exited", "exit_code": 0}).is_success
    assert proxy.admin("POST", "/rollouts/life/status", json={"status": "melted"}).status_code == 400
    assert proxy.admin("POST", "/rollouts/life/reward", json={"reward": "high"}).status_code == 400
    assert proxy.admin("POST", "/rollouts/ghost/reward", json={"reward": 1}).status_code == 404
    record = read_rollout(proxy.records, "life")
    assert (record.reward, record.termination, record.exit_code, record.n_calls, record.mode) == (
        0.75,
        "completed",
        0,
        1,
        "eval",
    )
    tokens = proxy.admin("GET", "/rollouts/life/calls?format=tokens").json()["calls"]
    assert set(tokens[0]) >= {"prompt_token_ids", "completion_token_ids", "completion_logprobs", "seq"}
    assert "original_request" not in tokens[0]
    assert (
        proxy.admin("GET", "/rollouts/life/calls").json()["calls"][0]["original_request"]["messages"] == TASK
    )
    assert proxy.admin("DELETE", "/rollouts/life").is_success
    assert chat(proxy.url, key).status_code == 401
    assert read_calls(proxy.records, "life")  # kept on disk without ?purge
    proxy.rollout("gone")
    assert proxy.admin("DELETE", "/rollouts/gone?purge=true").json()["purged"] is True
    assert not (proxy.records / "gone" / "0").exists()


def test_pause_drains_in_flight_calls_and_refuses_new_ones(proxy, scripted):
    created = proxy.rollout("paused")
    scripted.delay_s = 0.6
    results: list[httpx.Response] = []
    worker = threading.Thread(target=lambda: results.append(chat(proxy.url, created["api_key"])))
    worker.start()
    deadline = time.monotonic() + 10
    while httpx.get(proxy.url + "/healthz").json()["in_flight"] == 0 and time.monotonic() < deadline:
        time.sleep(0.02)
    paused = proxy.admin("POST", "/admin/pause", json={"drain_timeout_s": 10})
    assert paused.json() == {"paused": True, "in_flight": 0}
    worker.join()
    assert results[0].status_code == 200  # the in-flight call drained normally
    refused = chat(proxy.url, created["api_key"])
    assert refused.status_code == 429 and refused.headers["retry-after"] == "5"
    assert refused.json()["error"]["code"] == "paused"
    assert messages(proxy.url, created["api_key"]).json()["error"]["type"] == "rate_limit_error"
    scripted.delay_s = 0.0
    assert proxy.admin("POST", "/admin/weights", json={"version": 7}).json()["policy_version"] == 7
    assert proxy.admin("POST", "/admin/resume").json()["paused"] is False
    assert chat(proxy.url, created["api_key"]).status_code == 200
    calls = read_calls(proxy.records, "paused")
    assert [c.policy_version for c in calls] == [None, 7]
    assert proxy.admin("GET", "/rollouts/paused").json()["rollout"]["policy_versions"] == [7]


def test_upstream_errors_are_retried_and_recorded(proxy, scripted):
    created = proxy.rollout("flaky")
    scripted.fail_next = 2
    answer = chat(proxy.url, created["api_key"])
    assert answer.status_code == 200
    call = read_calls(proxy.records, "flaky")[0]
    assert call.retry_count == 2 and [f.kind for f in call.upstream_failures] == ["http_5xx", "http_5xx"]
    assert call.upstream_failures[0].http_status == 503 and call.error_kind == "none"
    assert read_rollout(proxy.records, "flaky").upstream_failures == {"http_5xx": 2}

    scripted.fail_next, scripted.fail_status = 1, 400
    scripted.fail_message = "This model's maximum context length is 32768 tokens"
    refused = messages(proxy.url, created["api_key"])
    assert refused.status_code == 400 and "maximum context length" in refused.json()["error"]["message"]
    call = read_calls(proxy.records, "flaky")[1]
    assert call.error_kind == "context_length" and call.retry_count == 0  # a 4xx is not retried
    assert [f.http_status for f in call.upstream_failures] == [400]


def test_upstream_without_token_fields_is_asked_again_without_them(proxy, scripted):
    created = proxy.rollout("plain")
    scripted.reject_token_fields = True
    assert chat(proxy.url, created["api_key"]).status_code == 200
    call = read_calls(proxy.records, "plain")[0]
    assert "return_token_ids" not in call.served_request and call.completion_token_ids is None
    assert call.retry_count == 0


def test_upstream_down_answers_in_the_api_format_and_keeps_serving(make_proxy, scripted):
    dead = f"http://127.0.0.1:{free_port()}"
    proxy = make_proxy([dead], upstream_retries=1)
    created = proxy.rollout("down")
    for answer in (chat(proxy.url, created["api_key"]), messages(proxy.url, created["api_key"])):
        assert answer.status_code == 502
    assert messages(proxy.url, created["api_key"]).json()["error"]["type"] == "api_error"
    calls = read_calls(proxy.records, "down")
    assert [c.error_kind for c in calls] == ["transport"] * 3 and calls[0].retry_count == 1
    assert len(calls[0].upstream_failures) == 2
    assert read_rollout(proxy.records, "down").upstream_failures == {"transport": 6}
    assert httpx.get(proxy.url + "/healthz").json()["status"] == "ok"


def test_slow_upstream_streams_keepalives_and_times_out_in_format(make_proxy, scripted):
    proxy = make_proxy(keepalive_s=0.1)
    created = proxy.rollout("slow")
    scripted.delay_s = 0.45
    streamed = chat(proxy.url, created["api_key"], stream=True)
    assert streamed.status_code == 200 and streamed.content.startswith(b": keep-alive\n\n")
    assert parse_sse(streamed.content)[-1] == (None, "[DONE]")
    pinged = messages(proxy.url, created["api_key"], stream=True)
    assert pinged.content.startswith(b'event: ping\ndata: {"type":"ping"}\n\n')
    assert parse_sse(pinged.content)[-1][0] == "message_stop"

    impatient = make_proxy(upstream_timeout_s=0.15, upstream_retries=0, keepalive_s=0.05)
    created = impatient.rollout("impatient")
    answer = chat(impatient.url, created["api_key"])
    assert answer.status_code == 504 and answer.json()["error"]["code"] == "timeout"
    failed_stream = messages(
        impatient.url, created["api_key"], stream=True
    )  # headers already sent: error event
    assert parse_sse(failed_stream.content)[-1][0] == "error"
    assert [c.error_kind for c in read_calls(impatient.records, "impatient")] == ["timeout", "timeout"]


def test_rollouts_stick_to_one_of_several_upstreams(make_proxy, upstream, scripted):
    second = ScriptedUpstream(model="scripted-2")
    with serve_in_thread(second.app()) as other:
        dead = f"http://127.0.0.1:{free_port()}"
        proxy = make_proxy([upstream[1].url, other.url, dead], upstream_retries=2)
        endpoints = {}
        for i in range(12):
            created = proxy.rollout(f"sticky{i}")
            for _ in range(3):
                assert chat(proxy.url, created["api_key"]).status_code == 200
            calls = read_calls(proxy.records, f"sticky{i}")
            assert len({c.endpoint for c in calls}) == 1
            endpoints[f"sticky{i}"] = calls[0]
        served_by = {c.endpoint for c in endpoints.values()}
        assert served_by == {upstream[1].url, other.url}  # the dead one's rollouts failed over
        failed_over = [c for c in endpoints.values() if c.upstream_failures]
        assert failed_over and all(c.upstream_failures[0].endpoint == dead for c in failed_over)


def test_client_disconnect_is_recorded(proxy, scripted):
    created = proxy.rollout("hangup")
    scripted.delay_s = 0.8
    with pytest.raises(httpx.ReadTimeout):
        httpx.post(
            proxy.url + "/v1/chat/completions",
            json={"model": "m", "messages": TASK},
            headers={"Authorization": f"Bearer {created['api_key']}"},
            timeout=0.2,
        )
    deadline = time.monotonic() + 5
    while not read_calls(proxy.records, "hangup") and time.monotonic() < deadline:
        time.sleep(0.05)
    call = read_calls(proxy.records, "hangup")[0]
    assert call.client_disconnected and call.returned_response is None


def test_models_count_tokens_retries_and_deadline(proxy):
    created = proxy.rollout("aux", deadline_s=30)
    base = proxy.url + created["base_path"]
    models = httpx.get(base + "/v1/models").json()
    assert models["object"] == "list" and models["data"][0]["id"] == "forge-policy"
    assert httpx.get(proxy.url + "/v1/models").status_code == 401
    counted = httpx.post(base + "/v1/messages/count_tokens", json={"model": "c", "messages": TASK}).json()
    assert counted["input_tokens"] > 0
    chat(base)
    chat(base)
    first, second = read_calls(proxy.records, "aux")
    assert second.retry_of == first.call_id and second.request_hash == first.request_hash
    late = proxy.rollout("late", deadline_s=0.05)
    time.sleep(0.1)
    assert chat(proxy.url, late["api_key"]).status_code == 403


def test_the_proxy_serves_from_a_uvloop_event_loop():
    """uvicorn picks uvloop only in its own run(); the proxy's servers make their loop themselves
    (`run_loop`, used by the CLI's serve_forever and by ServerThread)."""
    uvloop = pytest.importorskip("uvloop")

    async def app(scope, receive, send):  # type: ignore[no-untyped-def]
        if scope["type"] != "http":
            return
        loop = type(asyncio.get_running_loop())
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": f"{loop.__module__}.{loop.__name__}".encode()})

    with serve_in_thread(app) as server:
        assert httpx.get(server.url).text == "uvloop.Loop"
    loops = []

    async def main() -> None:
        loops.append(asyncio.get_running_loop())

    run_loop(main())
    assert isinstance(loops[0], uvloop.Loop)


CLI_SPY = """
import asyncio, sys
from forge_eval._cli.main import main
from forge_eval.proxy import _server

serve_pair = _server._serve_pair


async def spy(data, *rest):
    async def report():
        while not data.started:
            await asyncio.sleep(0.01)
        loop = type(asyncio.get_running_loop())
        protocol = data.config.http_protocol_class
        print(f"serving on {loop.__module__}.{loop.__name__} with {protocol.__name__}", file=sys.stderr)
        data.should_exit = True

    reporter = asyncio.ensure_future(report())
    await serve_pair(data, *rest)
    await reporter


_server._serve_pair = spy
sys.argv = ["forge-eval", *sys.argv[1:]]
main()
"""


def test_the_cli_proxy_serves_from_uvloop_with_its_own_protocol(tmp_path):
    """`forge-eval proxy serve` itself (not only the helpers): the running data plane's loop is uvloop's
    and its HTTP protocol the proxy's own httptools one (`_protocol.DataProtocol`). A spy around the pair
    of servers reports both once the data plane has started, then asks it to stop."""
    pytest.importorskip("uvloop")
    argv = [sys.executable, "-c", CLI_SPY, "proxy", "serve", "--upstream", "http://127.0.0.1:9/v1"]
    argv += ["--port", "0", "--control-port", "0", "--records", str(tmp_path / "records")]
    env = {**os.environ, "FORGE_PROXY_SECRET": "s", "FORGE_PROXY_ADMIN_KEY": "a"}
    result = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "serving on uvloop.Loop with DataProtocol" in result.stderr, result.stderr[-2000:]
