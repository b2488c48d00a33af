"""The HTTP layer (tool-call recovery, stats, request log, SSE), with a scripted engine.

The engine is scripted so these protocol tests run in milliseconds and control exactly what the
"model" wrote; test_e2e.py covers the same server with the real llama.cpp engine.
"""

import json
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from forge_eval.models._app import create_app
from forge_eval.models._engine import EngineRequestError

TOOLS = [
    {
        "type": "function",
        "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {}}},
    }
]


class ScriptedEngine:
    def __init__(self, *contents: str) -> None:
        self.contents = list(contents)
        self.requests: list[dict[str, Any]] = []

    def complete(self, request: dict[str, Any]) -> dict[str, Any]:
        self.requests.append(request)
        content = self.contents.pop(0)
        if content == "!crash":
            raise RuntimeError("llama.cpp aborted")
        if content == "!too-long":
            raise EngineRequestError(400, {"error": {"code": 400, "message": "exceeds the context size"}})
        return {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 1,
            "model": "/path/model.gguf",
            "choices": [
                {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}
            ],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        }


def _client(engine: ScriptedEngine, log: Path | None = None) -> TestClient:
    return TestClient(create_app(engine, "qwen-0.5b", log))


def _chat(client: TestClient, **body: Any) -> Any:
    return client.post("/v1/chat/completions", json={"messages": [{"role": "user", "content": "hi"}], **body})


def test_text_call_becomes_structured_tool_calls() -> None:
    engine = ScriptedEngine('Checking.\n```json\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n```')
    response = _chat(_client(engine), tools=TOOLS).json()
    choice = response["choices"][0]
    assert choice["finish_reason"] == "tool_calls"
    assert choice["message"]["content"] == "Checking."
    (call,) = choice["message"]["tool_calls"]
    assert call["type"] == "function" and call["id"].startswith("call_")
    assert call["function"] == {"name": "get_weather", "arguments": '{"city": "Oslo"}'}
    assert response["forge"] == {
        "tool_parse": "parsed",
        "format": "fenced",
        "rejected_calls": 0,
        "repaired_calls": 0,
    }
    assert response["model"] == "qwen-0.5b"


def test_copied_schema_keywords_are_dropped_and_counted() -> None:
    tools = [
        {
            "type": "function",
            "function": {
                "name": "kb_search",
                "parameters": {
                    "type": "object",
                    "properties": {"query": {"type": "string"}, "type": {"type": "string"}},
                    "required": ["query"],
                },
            },
        }
    ]
    written = '{"name": "kb_search", "arguments": {"query": "vpn", "type": "faq", "required": ["query"]}}'
    client = _client(ScriptedEngine(written))
    response = _chat(client, tools=tools).json()
    (call,) = response["choices"][0]["message"]["tool_calls"]
    # "required" is a schema keyword the tool does not declare; "type" is a declared parameter here
    assert json.loads(call["function"]["arguments"]) == {"query": "vpn", "type": "faq"}
    assert response["forge"]["repaired_calls"] == 1
    assert client.get("/forge/stats").json()["repaired_calls"] == 1


def test_without_declared_tools_text_is_untouched() -> None:
    text = '{"name": "get_weather", "arguments": {}}'
    response = _chat(_client(ScriptedEngine(text))).json()
    assert response["choices"][0]["message"] == {"role": "assistant", "content": text}
    assert response["forge"]["tool_parse"] == "none"


def test_tool_choice_none_disables_parsing() -> None:
    response = _chat(
        _client(ScriptedEngine('{"name": "get_weather", "arguments": {}}')), tools=TOOLS, tool_choice="none"
    ).json()
    assert "tool_calls" not in response["choices"][0]["message"]


def test_stats_count_outcomes_and_formats() -> None:
    client = _client(
        ScriptedEngine(
            '{"name": "get_weather", "arguments": {}}',
            '<tool_call>\n{"name": "get_weather", "arguments": {}}\n</tool_call>',
            '<tool_call>\n{"name": "launch_rockets", "arguments": {}}\n</tool_call>',
            "It is sunny.",
            "plain chat",
        )
    )
    forge = [_chat(client, tools=TOOLS).json()["forge"] for _ in range(4)]
    _chat(client)
    assert [(f["tool_parse"], f["format"]) for f in forge] == [
        ("parsed", "bare"),
        ("parsed", "tagged"),
        ("failed", None),
        ("none", None),
    ]
    stats = client.get("/forge/stats").json()
    assert stats == {
        "requests": 5,
        "errors": 0,
        "tool_requests": 4,
        "parsed": 2,
        "failed": 1,
        "none": 1,
        "tagged": 1,
        "fenced": 0,
        "bare": 1,
        "rejected_calls": 1,
        "repaired_calls": 0,
        "prompt_tokens": 50,
        "completion_tokens": 25,
    }


def test_request_log_records_sampling_parameters(tmp_path: Path) -> None:
    log = tmp_path / "requests.jsonl"
    engine = ScriptedEngine("a", "b")
    client = _client(engine, log)
    _chat(client, seed=11, temperature=0.8, top_p=0.9, max_tokens=7, stop=["\n"], tools=TOOLS)
    _chat(client, seed=12, max_completion_tokens=9)
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert [(x["seed"], x["temperature"], x["top_p"], x["max_tokens"], x["stop"]) for x in lines] == [
        (11, 0.8, 0.9, 7, ["\n"]),
        (12, None, None, None, None),
    ]
    assert lines[0]["tools"] == ["get_weather"]
    assert engine.requests[0]["seed"] == 11 and engine.requests[0]["stop"] == ["\n"]
    assert engine.requests[1]["max_tokens"] == 9, "max_completion_tokens must reach llama.cpp as max_tokens"


def test_deterministic_mode_turns_off_the_prompt_cache() -> None:
    engine = ScriptedEngine("a", "b")
    _chat(_client(engine), seed=1)
    _chat(TestClient(create_app(engine, "m", deterministic=True)), seed=1)
    assert "cache_prompt" not in engine.requests[0]
    assert engine.requests[1]["cache_prompt"] is False


def test_stream_is_synthesized_as_sse() -> None:
    engine = ScriptedEngine('{"name": "get_weather", "arguments": {"city": "Rome"}}')
    response = _chat(_client(engine), tools=TOOLS, stream=True, stream_options={"include_usage": True})
    assert response.headers["content-type"].startswith("text/event-stream")
    events = [line[len("data: ") :] for line in response.text.splitlines() if line.startswith("data: ")]
    assert events[-1] == "[DONE]"
    chunks = [json.loads(e) for e in events[:-1]]
    assert chunks[0]["choices"][0]["delta"]["tool_calls"][0]["function"]["name"] == "get_weather"
    assert chunks[1]["choices"][0]["finish_reason"] == "tool_calls"
    assert chunks[2]["usage"]["total_tokens"] == 15
    assert "stream" not in engine.requests[0] and "stream_options" not in engine.requests[0]


def test_streaming_with_the_openai_client_assembles_the_call() -> None:
    """The official client consumes the synthesized stream (what streaming harnesses use)."""
    openai = pytest.importorskip("openai")
    http = _client(ScriptedEngine('{"name": "get_weather", "arguments": {"city": "Rome"}}'))
    client = openai.OpenAI(base_url="http://testserver/v1", api_key="x", http_client=http)
    stream = client.chat.completions.create(
        model="qwen-0.5b", messages=[{"role": "user", "content": "w?"}], tools=TOOLS, stream=True
    )
    names = [tc.function.name for chunk in stream for c in chunk.choices for tc in (c.delta.tool_calls or [])]
    assert names == ["get_weather"]


def test_bad_requests_are_clear_400s() -> None:
    client = _client(ScriptedEngine("!too-long", "!crash"))
    assert client.post("/v1/chat/completions", content=b"{not json").status_code == 400
    missing = client.post("/v1/chat/completions", json={"model": "m"})
    assert missing.status_code == 400 and "messages" in missing.json()["error"]["message"]
    too_long = _chat(client)
    assert too_long.status_code == 400 and "context" in too_long.json()["error"]["message"]
    prefill = client.post(
        "/v1/chat/completions",
        json={"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "Sure, "}]},
    )
    assert prefill.status_code == 400 and "prefill" in prefill.json()["error"]["message"]
    crashed = _chat(client)
    assert crashed.status_code == 500 and "llama.cpp aborted" in crashed.json()["error"]["message"]
    assert client.get("/forge/stats").json()["errors"] == 5


def test_health_and_models() -> None:
    client = _client(ScriptedEngine())
    assert client.get("/health").json() == {"status": "ok", "model": "qwen-0.5b"}
    assert [m["id"] for m in client.get("/v1/models").json()["data"]] == ["qwen-0.5b"]
