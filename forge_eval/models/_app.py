"""The OpenAI-compatible HTTP front of an embedded model.

llama.cpp already speaks the Chat Completions protocol; this layer adds what forge-eval needs on
top: tool calls recovered from text (`_tool_parse`), a `forge` field on each response that says how
the tool-call format fared (read later by the behavioral analysis), counters at `/forge/stats`, a
request log that proves which sampling parameters reached the model, and synthesized SSE for
clients that insist on streaming.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio.to_thread
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from forge_eval.models._engine import ChatEngine, EngineRequestError
from forge_eval.models._tool_parse import ToolCallFormat, ToolParseStatus, parse_tool_calls

# Sampling parameters written to the request log, as the client sent them (None when absent).
LOGGED_PARAMS = ("seed", "temperature", "top_p", "max_tokens", "max_completion_tokens", "stop", "stream")
_CLIENT_ONLY = ("stream", "stream_options")


@dataclass
class ServerStats:
    """Counters since start.

    `parsed`/`failed`/`none` count the choices of requests that declared tools, and the
    `tagged`/`fenced`/`bare` counts say how the parsed ones were written; `rejected_calls` counts
    call-shaped JSON that was rejected (undeclared tool, arguments not an object), `repaired_calls`
    the valid calls whose arguments had copied schema keywords dropped.
    """

    requests: int = 0
    errors: int = 0
    tool_requests: int = 0
    parsed: int = 0
    failed: int = 0
    none: int = 0
    tagged: int = 0
    fenced: int = 0
    bare: int = 0
    rejected_calls: int = 0
    repaired_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0


def _error(status: int, message: str, kind: str = "invalid_request_error") -> JSONResponse:
    return JSONResponse({"error": {"message": message, "type": kind, "code": status}}, status_code=status)


def _request_problem(body: Any) -> str | None:
    """Why llama.cpp cannot answer this request as asked, or None."""
    if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
        return "the request body must be a JSON object with a 'messages' array"
    last = body["messages"][-1] if body["messages"] else None
    if isinstance(last, dict) and last.get("role") == "assistant":
        return "a final assistant message (prefill) is not supported; end with a user or tool message"
    return None


def _tool_names(body: dict[str, Any]) -> list[str]:
    names = []
    for tool in body.get("tools") or []:
        function = tool.get("function") if isinstance(tool, dict) else None
        if isinstance(function, dict) and isinstance(function.get("name"), str):
            names.append(function["name"])
    return names


def _tool_params(body: dict[str, Any]) -> dict[str, set[str]]:
    """Declared parameter names per tool (what a call's arguments may hold)."""
    params: dict[str, set[str]] = {}
    for tool in body.get("tools") or []:
        function = tool.get("function") if isinstance(tool, dict) else None
        if isinstance(function, dict) and isinstance(function.get("name"), str):
            schema = function.get("parameters")
            properties = schema.get("properties") if isinstance(schema, dict) else None
            params[function["name"]] = set(properties) if isinstance(properties, dict) else set()
    return params


def _engine_request(body: dict[str, Any]) -> dict[str, Any]:
    request = {k: v for k, v in body.items() if k not in _CLIENT_ONLY}
    if "max_tokens" not in request and "max_completion_tokens" in request:
        request["max_tokens"] = request["max_completion_tokens"]
    return request


@dataclass
class _ChoiceParse:
    status: ToolParseStatus = "none"
    format: ToolCallFormat | None = None
    rejected: int = 0
    repaired: int = 0


def _apply_tool_parse(
    choice: dict[str, Any], tool_names: list[str], params: dict[str, set[str]]
) -> _ChoiceParse:
    """Turn calls written as text into structured `tool_calls` (llama.cpp returns text only)."""
    message = choice.get("message") or {}
    content = message.get("content")
    if not isinstance(content, str):
        return _ChoiceParse()
    result = parse_tool_calls(content, tool_names, params)
    if result.status == "parsed":
        message["content"] = result.content or None
        message["tool_calls"] = [
            {
                "id": f"call_{uuid.uuid4().hex[:24]}",
                "type": "function",
                "function": {"name": call.name, "arguments": json.dumps(call.arguments)},
            }
            for call in result.calls
        ]
        choice["finish_reason"] = "tool_calls"
    return _ChoiceParse(result.status, result.format, len(result.errors), result.repaired)


def _overall(statuses: list[ToolParseStatus]) -> ToolParseStatus:
    for status in ("failed", "parsed"):
        if status in statuses:
            return status
    return "none"


def _sse(result: dict[str, Any], include_usage: bool) -> Iterator[str]:
    """A finished completion replayed as Chat Completions stream chunks."""
    base = {
        "id": result.get("id"),
        "object": "chat.completion.chunk",
        "created": result.get("created"),
        "model": result.get("model"),
    }
    for choice in result.get("choices", []):
        message = choice.get("message") or {}
        delta: dict[str, Any] = {"role": "assistant", "content": message.get("content")}
        if message.get("tool_calls"):
            delta["tool_calls"] = [{"index": i, **call} for i, call in enumerate(message["tool_calls"])]
        yield _event(
            {**base, "choices": [{"index": choice.get("index", 0), "delta": delta, "finish_reason": None}]}
        )
        yield _event(
            {
                **base,
                "choices": [
                    {
                        "index": choice.get("index", 0),
                        "delta": {},
                        "finish_reason": choice.get("finish_reason"),
                    }
                ],
                "forge": result.get("forge"),
            }
        )
    if include_usage:
        yield _event({**base, "choices": [], "usage": result.get("usage")})
    yield "data: [DONE]\n\n"


def _event(payload: dict[str, Any]) -> str:
    return f"data: {json.dumps(payload)}\n\n"


def create_app(
    engine: ChatEngine, model_name: str, request_log: Path | None = None, deterministic: bool = False
) -> Starlette:
    """The ASGI app serving `engine` under the model id `model_name`.

    Args:
        engine: Answers chat-completion requests.
        model_name: Reported by `/v1/models` and in every response's `model`.
        request_log: If set, one JSON line per chat request with the sampling parameters received.
        deterministic: Make a seeded request's text depend only on the request. llama.cpp's logits
            change slightly with how many prompt tokens come from its cache and with what other
            requests share the batch, enough to change a sample at temperature 0.8; this mode
            turns off prompt caching and runs one request at a time (slower agent loops).
    """
    stats = ServerStats()
    started = int(time.time())
    one_at_a_time = threading.Lock()

    def complete(request: dict[str, Any]) -> dict[str, Any]:
        if not deterministic:
            return engine.complete(request)
        with one_at_a_time:
            return engine.complete({**request, "cache_prompt": False})

    def log_request(body: dict[str, Any], tool_names: list[str]) -> None:
        if request_log is None:
            return
        line = {
            "time": datetime.now(UTC).isoformat(),
            **{k: body.get(k) for k in LOGGED_PARAMS},
            "tools": tool_names,
            "messages": len(body.get("messages") or []),
        }
        with request_log.open("a") as f:
            f.write(json.dumps(line) + "\n")

    async def health(request: Request) -> Response:
        return JSONResponse({"status": "ok", "model": model_name})

    async def models(request: Request) -> Response:
        return JSONResponse(
            {
                "object": "list",
                "data": [{"id": model_name, "object": "model", "created": started, "owned_by": "forge-eval"}],
            }
        )

    async def forge_stats(request: Request) -> Response:
        return JSONResponse(asdict(stats))

    async def chat_completions(request: Request) -> Response:
        stats.requests += 1
        try:
            body = await request.json()
        except ValueError:
            stats.errors += 1
            return _error(400, "the request body is not valid JSON")
        problem = _request_problem(body)
        if problem is not None:
            stats.errors += 1
            return _error(400, problem)
        tool_names = _tool_names(body)
        log_request(body, tool_names)
        try:
            result = await anyio.to_thread.run_sync(complete, _engine_request(body))
        except EngineRequestError as e:
            stats.errors += 1
            return JSONResponse(e.body, status_code=e.status)
        except Exception as e:  # an engine failure must reach the client as an API error, not a hang
            stats.errors += 1
            return _error(500, f"the model failed: {type(e).__name__}: {e}", kind="server_error")
        result["model"] = model_name
        parse = bool(tool_names) and body.get("tool_choice") != "none"
        parses = [
            _apply_tool_parse(choice, tool_names, _tool_params(body)) if parse else _ChoiceParse()
            for choice in result.get("choices", [])
        ]
        if tool_names:
            stats.tool_requests += 1
            for p in parses:
                setattr(stats, p.status, getattr(stats, p.status) + 1)
                if p.format is not None:
                    setattr(stats, p.format, getattr(stats, p.format) + 1)
        rejected = sum(p.rejected for p in parses)
        stats.rejected_calls += rejected
        repaired = sum(p.repaired for p in parses)
        stats.repaired_calls += repaired
        usage = result.get("usage") or {}
        stats.prompt_tokens += int(usage.get("prompt_tokens", 0))
        stats.completion_tokens += int(usage.get("completion_tokens", 0))
        result["forge"] = {
            "tool_parse": _overall([p.status for p in parses]),
            "format": next((p.format for p in parses if p.format), None),
            "rejected_calls": rejected,
            "repaired_calls": repaired,
        }
        if body.get("stream"):
            include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
            return StreamingResponse(_sse(result, include_usage), media_type="text/event-stream")
        return JSONResponse(result)

    return Starlette(
        routes=[
            Route("/health", health),
            Route("/v1/models", models),
            Route("/v1/chat/completions", chat_completions, methods=["POST"]),
            Route("/forge/stats", forge_stats),
        ]
    )
