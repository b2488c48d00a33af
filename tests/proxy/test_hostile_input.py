"""Hostile input never gets a plain-text 500: deep nesting, odd digits, lone surrogates, NaN and fuzzed
bodies and control fields all get an API-shaped 4xx, and the proxy keeps serving afterwards.

The proxy app runs in-process (Starlette's TestClient, the real app and record writer) over the real
scripted upstream server, so that hypothesis can send hundreds of bodies in a few seconds.
"""

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from forge_eval.proxy import (
    ProxyConfig,
    ScriptedUpstream,
    create_app,
    create_control_app,
    read_calls,
    serve_in_thread,
    verify_key,
)

PATHS = {
    "chat": "/v1/chat/completions",
    "responses": "/v1/responses",
    "anthropic_messages": "/v1/messages",
    "completions": "/v1/completions",
}
VALID = {
    "chat": {"model": "m", "messages": [{"role": "user", "content": "hi"}]},
    "responses": {"model": "m", "input": "hi"},
    "anthropic_messages": {"model": "m", "max_tokens": 8, "messages": [{"role": "user", "content": "hi"}]},
    "completions": {"model": "m", "prompt": "hi"},
}
FIELDS = {
    "chat": ["messages", "tools", "tool_choice", "stream", "stream_options", "max_tokens", "stop", "n"],
    "responses": ["input", "instructions", "tools", "tool_choice", "stream", "previous_response_id", "text"],
    "anthropic_messages": ["messages", "system", "tools", "tool_choice", "stream", "max_tokens", "thinking"],
    "completions": ["prompt", "stream", "max_tokens", "stop", "echo", "suffix", "stream_options"],
}
WORDS = ["user", "assistant", "system", "tool", "text", "function", "function_call", "tool_use", "auto"]
KEYS = ["role", "content", "type", "text", "name", "arguments", "call_id", "id", "tool_calls", "input"]
JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-3, 3)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=5)
    | st.sampled_from(WORDS),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(KEYS), inner, max_size=4),
    max_leaves=12,
)
CONTROL_FIELDS = [
    "rollout_id",
    "attempt",
    "group_uid",
    "sampling",
    "deadline_s",
    "reward",
    "verifier_output",
    "answer",
    "status",
    "exit_code",
    "version",
    "endpoints",
    "drain_timeout_s",
]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    scripted = ScriptedUpstream(keep_requests=False)
    with serve_in_thread(scripted.app()) as upstream:
        config = ProxyConfig(
            records_dir=tmp_path_factory.mktemp("records"),
            secret="s",
            upstreams=[upstream.url],
            upstream_retries=0,
        )
        app = create_app(config)
        with TestClient(app) as data, TestClient(create_control_app(app)) as control:
            control.headers["Authorization"] = f"Bearer {config.admin_key}"
            created = control.post("/rollouts", json={"rollout_id": "h"}).json()
            data.headers["Authorization"] = f"Bearer {created['api_key']}"
            data.headers["content-type"] = "application/json"
            yield {"data": data, "control": control, "config": config}


def _api_shaped(answer: httpx.Response, status: int | tuple[int, ...]) -> dict[str, Any]:
    assert answer.status_code in (status if isinstance(status, tuple) else (status,)), answer.text[:300]
    assert answer.headers["content-type"].startswith("application/json"), answer.text[:300]
    body = answer.json()
    assert isinstance(body["error"]["message"], str) and body["error"]["message"], body
    assert "Traceback" not in body["error"]["message"]
    return body


def _still_serving(served: dict[str, Any]) -> None:
    answer = served["data"].post(PATHS["chat"], json=VALID["chat"])
    assert answer.status_code == 200, answer.text


@pytest.mark.parametrize("api", list(PATHS))
def test_deeply_nested_json_is_a_400_in_the_api_format(served, api):
    raw = b'{"model": "m", "messages": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    body = _api_shaped(served["data"].post(PATHS[api], content=raw), 400)
    assert "nested too deeply" in body["error"]["message"]
    _still_serving(served)


def test_nan_and_infinity_are_refused_not_recorded_as_null(served):
    for constant in (b"NaN", b"Infinity", b"-Infinity"):
        raw = (
            b'{"model": "m", "messages": [{"role": "user", "content": "x"}], "temperature": '
            + constant
            + b"}"
        )
        body = _api_shaped(served["data"].post(PATHS["chat"], content=raw), 400)
        assert constant.decode() in body["error"]["message"]


def test_numbers_too_large_for_a_double_are_refused_not_recorded_as_null(served):
    for number in (b"1e400", b"-1e999", b"12345678901e300"):
        raw = b'{"model": "m", "messages": [{"role": "user", "content": "x"}], "top_p": ' + number + b"}"
        body = _api_shaped(served["data"].post(PATHS["chat"], content=raw), 400)
        assert number.decode() in body["error"]["message"]
    control = served["control"]
    raw = b'{"reward": 1, "verifier_output": {"score": 1e400}}'
    body = _api_shaped(control.post("/rollouts/h/reward", content=raw), 400)
    assert "1e400" in body["error"]["message"]
    tiny = b'{"model": "m", "messages": [{"role": "user", "content": "x"}], "temperature": 1e-400}'
    assert served["data"].post(PATHS["chat"], content=tiny).status_code == 200  # underflow is just 0.0


# one body per API that uses every kind of item the adapters read (roles, part and block types, tools)
RICH = {
    "chat": {
        "model": "m",
        "messages": [
            {"role": "system", "content": "s"},
            {"role": "user", "content": [{"type": "text", "text": "hi"}]},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "ok"},
        ],
        "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}],
        "tool_choice": {"type": "function", "function": {"name": "f"}},
        "stream_options": {"include_usage": True},
        "stop": ["x"],
    },
    "responses": {
        "model": "m",
        "instructions": "be brief",
        "input": [
            {"type": "message", "role": "developer", "content": "d"},
            {
                "role": "user",
                "content": [{"type": "input_text", "text": "hi"}, {"type": "input_image", "image_url": "u"}],
            },
            {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"},
            {
                "type": "function_call_output",
                "call_id": "c1",
                "output": [{"type": "input_text", "text": "ok"}],
            },
            {"type": "custom_tool_call", "call_id": "c2", "name": "apply_patch", "input": "p"},
            {"type": "custom_tool_call_output", "call_id": "c2", "output": "done"},
            {"type": "reasoning", "summary": []},
        ],
        "tools": [
            {"type": "function", "name": "f", "parameters": {"type": "object"}},
            {"type": "custom", "name": "apply_patch", "format": {"type": "grammar", "definition": "g"}},
        ],
        "tool_choice": {"type": "custom", "name": "apply_patch"},
        "text": {"format": {"type": "json_schema", "name": "s", "schema": {"type": "object"}}},
    },
    "anthropic_messages": {
        "model": "m",
        "max_tokens": 8,
        "system": [{"type": "text", "text": "s"}],
        "messages": [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "hi"},
                    {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AA"}},
                    {"type": "document", "content": [{"type": "text", "text": "doc"}]},
                ],
            },
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "f", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]},
        ],
        "tools": [{"name": "f", "input_schema": {"type": "object"}}],
        "tool_choice": {"type": "tool", "name": "f"},
        "stop_sequences": ["x"],
    },
    "completions": {"model": "m", "prompt": ["hi"], "stop": "x", "stream_options": {"include_usage": True}},
}


def _string_leaves(value: Any, path: tuple = ()) -> Iterator[tuple]:
    if isinstance(value, str):
        yield path
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _string_leaves(item, (*path, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _string_leaves(item, (*path, i))


def _replaced(body: Any, path: tuple, new: Any) -> Any:
    copy = json.loads(json.dumps(body))
    holder = copy
    for step in path[:-1]:
        holder = holder[step]
    holder[path[-1]] = new
    return copy


@pytest.mark.parametrize("api", list(PATHS))
def test_a_list_or_object_in_place_of_any_name_is_a_4xx_not_a_500(served, api):
    """Every string of a body that uses all the item kinds (roles, part and block `type`s, tool names)
    replaced by a list, an object and a number: the answer is a 200 or an API-shaped 4xx."""
    data = served["data"]
    assert data.post(PATHS[api], json=RICH[api]).status_code == 200
    leaves = list(_string_leaves(RICH[api]))
    assert leaves
    for path in leaves:
        for new in (["user"], {"type": "text"}, 7):
            answer = data.post(PATHS[api], content=json.dumps(_replaced(RICH[api], path, new)))
            if answer.status_code != 200:
                _api_shaped(answer, (400, 404))
    _still_serving(served)


@pytest.mark.parametrize("api", list(PATHS))
def test_a_lone_surrogate_is_a_400_naming_where_it_is(served, api):
    escaped = json.dumps(VALID[api]).replace('"hi"', '"hi \\ud83d"').encode()
    body = _api_shaped(served["data"].post(PATHS[api], content=escaped), 400)
    assert "surrogate" in body["error"]["message"] and "\\ud83d" in body["error"]["message"]
    paired = json.dumps(VALID[api]).replace('"hi"', '"hi \\ud83d\\ude00"').encode()  # a real emoji
    assert served["data"].post(PATHS[api], content=paired).status_code == 200
    _still_serving(served)


def test_attempts_and_rollout_ids_must_be_plain_ascii_digits_and_names(served):
    data, control = served["data"], served["control"]
    for attempt in ("%C2%B2", "%D9%A1", "1%0A"):  # superscript two, Arabic-Indic one, "1\n"
        answer = data.post(f"/r/h/{attempt}/v1/chat/completions", json=VALID["chat"])
        _api_shaped(answer, 401)
        _api_shaped(control.get(f"/rollouts/h?attempt={attempt}"), 400)
        _api_shaped(control.post("/rollouts/h/reward", json={"reward": 1, "attempt": attempt}), 400)
    for rollout_id in ("ok\n", "ok\r", " ok", "", "a" * 129, "é"):
        _api_shaped(control.post("/rollouts", json={"rollout_id": rollout_id}), 400)
    key = served["config"].secret
    assert verify_key(key, "fk.h.\u00b2.0") is None and verify_key(key, "fk.h\n.0.0") is None
    raw_key = "Bearer fk.h.\u00b2.abcdef".encode("latin-1")  # a header the client sends as raw bytes
    answer = data.post(PATHS["chat"], json=VALID["chat"], headers={"Authorization": raw_key})
    _api_shaped(answer, 401)


@pytest.mark.parametrize("api", list(PATHS))
def test_fuzzed_bodies_get_an_answer_or_an_api_shaped_4xx(served, api):
    data = served["data"]

    @settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.dictionaries(st.sampled_from(FIELDS[api]), JSON, max_size=3))
    def check(mutation: dict[str, Any]) -> None:
        answer = data.post(PATHS[api], content=json.dumps({**VALID[api], **mutation}))
        if answer.status_code != 200:
            _api_shaped(answer, (400, 404, 413, 415, 422))

    check()
    _still_serving(served)


def test_fuzzed_control_fields_get_a_json_4xx(served):
    control = served["control"]

    @settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
    @given(
        st.sampled_from(
            ["/rollouts", "/rollouts/h/reward", "/rollouts/h/status", "/admin/weights", "/admin/pause"]
        ),
        st.dictionaries(st.sampled_from(CONTROL_FIELDS), JSON, max_size=3),
    )
    def check(path: str, body: dict[str, Any]) -> None:
        if path == "/admin/pause" and isinstance(body.get("drain_timeout_s"), int | float):
            body["drain_timeout_s"] = min(body["drain_timeout_s"], 0.01)
        answer = control.post(path, content=json.dumps(body), headers={"content-type": "application/json"})
        control.post("/admin/resume")
        if answer.status_code >= 300:
            _api_shaped(answer, (400, 404))

    check()
    control.post("/rollouts/h/status", json={"status": "exited"})  # fuzzing may have finished it
    _still_serving(served)
    assert read_calls(served["config"].records_dir, "h")
