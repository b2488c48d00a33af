"""Anthropic Messages (`/v1/messages`, Claude Code): content blocks <-> chat messages, SSE with pings.

`tool_result` blocks of a user turn become chat `tool` messages placed before the rest of that turn, with
`is_error: true` kept on the message when the harness marked its tool's failure (Claude Code does, e.g. a
`Read` of a missing file): the chat API has no such field, but the record and the transcript need it;
Claude Code's mid-conversation `system` messages stay system messages.
"""

import json
from collections.abc import Iterator
from typing import Any

from forge_eval.proxy._adapters._adapter import ADAPTERS, Adapter, ConversationStore, new_id, sse
from forge_eval.proxy._adapters._fields import common_fields, field, required
from forge_eval.proxy._canonical import BadRequest, CanonicalRequest, CanonicalResponse
from forge_eval.proxy.records import TOOL_ERROR_KEY

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    415: "invalid_request_error",
    429: "rate_limit_error",
    529: "overloaded_error",
}
_STOP_REASONS = {"stop": "end_turn", "length": "max_tokens", "tool_calls": "tool_use"}


def _text(content: Any, where: str) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("type") == "text"
        )
    raise BadRequest(f"{where} must be a string or a list of blocks")


def _image(block: dict[str, Any], where: str) -> dict[str, Any]:
    source = block.get("source") or {}
    if not isinstance(source, dict):
        raise BadRequest(f"{where}.source must be an object, got {type(source).__name__}")
    if source.get("type") == "base64":
        url = f"data:{source.get('media_type', 'image/png')};base64,{source.get('data', '')}"
    else:
        url = str(source.get("url", ""))
    return {"type": "image_url", "image_url": {"url": url}}


def _user(content: Any, where: str) -> list[dict[str, Any]]:
    """One user turn as chat messages: its tool results first, then its text/images."""
    if isinstance(content, str):
        return [{"role": "user", "content": content}]
    if not isinstance(content, list):
        raise BadRequest(f"{where}.content must be a string or a list of blocks")
    results: list[dict[str, Any]] = []
    parts: list[dict[str, Any]] = []
    for j, block in enumerate(content):
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "tool_result":
            text = _text(block.get("content", ""), f"{where}.content[{j}].content")
            result = {"role": "tool", "tool_call_id": str(block.get("tool_use_id")), "content": text}
            results.append(result | ({TOOL_ERROR_KEY: True} if block.get("is_error") is True else {}))
        elif kind == "text":
            parts.append({"type": "text", "text": str(block.get("text", ""))})
        elif kind == "image":
            parts.append(_image(block, f"{where}.content[{j}]"))
        elif kind in ("document", "search_result"):
            parts.append({"type": "text", "text": _text(block.get("content", block.get("text", "")), where)})
        else:
            raise BadRequest(f"{where}.content[{j}]: unsupported block type {kind!r}")
    if parts:
        only_text = all(p["type"] == "text" for p in parts)
        results.append(
            {"role": "user", "content": "\n".join(p["text"] for p in parts) if only_text else parts}
        )
    return results


def _assistant(content: Any, where: str) -> dict[str, Any]:
    if isinstance(content, str):
        return {"role": "assistant", "content": content}
    if not isinstance(content, list):
        raise BadRequest(f"{where}.content must be a string or a list of blocks")
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    for block in content:
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text":
            texts.append(str(block.get("text", "")))
        elif kind in ("tool_use", "server_tool_use"):
            arguments = json.dumps(block.get("input", {}), ensure_ascii=False)
            calls.append(
                {
                    "id": str(block.get("id")),
                    "type": "function",
                    "function": {"name": str(block.get("name")), "arguments": arguments},
                }
            )
    message: dict[str, Any] = {"role": "assistant", "content": "\n".join(texts) or None}
    if calls:
        message["tool_calls"] = calls
    return message


def _tool_choice(choice: Any) -> Any:
    if not isinstance(choice, dict):
        return None
    kind = choice.get("type")
    if kind == "tool":
        return {"type": "function", "function": {"name": choice.get("name")}}
    return {"auto": "auto", "any": "required", "none": "none"}.get(kind) if isinstance(kind, str) else None


def _tool_input(arguments: str) -> dict[str, Any]:
    try:
        value = json.loads(arguments) if arguments else {}
    except ValueError:
        return {"_raw": arguments}
    return value if isinstance(value, dict) else {"_value": value}


def _message(
    model: str, content: list[dict[str, Any]], stop_reason: str | None, response: CanonicalResponse
) -> dict[str, Any]:
    usage = {"input_tokens": response.prompt_tokens, "output_tokens": response.completion_tokens}
    return {
        "id": new_id("msg_"),
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": usage,
    }


class AnthropicAdapter(Adapter):
    api = "anthropic_messages"
    keepalive = b'event: ping\ndata: {"type":"ping"}\n\n'

    def parse(self, body: dict[str, Any], conversations: ConversationStore) -> CanonicalRequest:
        raw = required(body, "messages", list)
        messages: list[dict[str, Any]] = []
        system = body.get("system")
        if system:
            messages.append({"role": "system", "content": _text(system, "system")})
        for i, message in enumerate(raw):
            where = f"messages[{i}]"
            role = message.get("role") if isinstance(message, dict) else None
            if role == "user":
                messages.extend(_user(message.get("content", ""), where))
            elif role == "assistant":
                messages.append(_assistant(message.get("content", ""), where))
            elif role == "system":
                messages.append({"role": "system", "content": _text(message.get("content", ""), where)})
            else:
                raise BadRequest(f"{where}.role must be user or assistant, got {role!r}")
        if not raw:
            raise BadRequest("'messages' must not be empty")
        tools = []
        for i, tool in enumerate(field(body, "tools", list) or []):
            if not isinstance(tool, dict) or "name" not in tool:
                raise BadRequest(f"tools[{i}] must be an object with a name")
            if "input_schema" not in tool:
                continue  # a server tool (web search, ...) the upstream cannot run
            function = {
                "name": tool["name"],
                "description": tool.get("description", ""),
                "parameters": tool["input_schema"],
            }
            tools.append({"type": "function", "function": function})
        return CanonicalRequest(
            messages=messages,
            tools=tools,
            tool_choice=_tool_choice(body.get("tool_choice")) if tools else None,
            include_usage=True,
            **common_fields(body, ("max_tokens",), "stop_sequences"),
        )

    def _blocks(self, response: CanonicalResponse) -> list[dict[str, Any]]:
        blocks: list[dict[str, Any]] = []
        if response.text:
            blocks.append({"type": "text", "text": response.text})
        for call in response.tool_calls:
            blocks.append(
                {"type": "tool_use", "id": call.id, "name": call.name, "input": _tool_input(call.arguments)}
            )
        return blocks

    def _stop_reason(self, response: CanonicalResponse) -> str:
        return _STOP_REASONS.get(response.finish_reason, "end_turn")

    def render(self, request: CanonicalRequest, response: CanonicalResponse) -> dict[str, Any]:
        return _message(request.model, self._blocks(response), self._stop_reason(response), response)

    def stream_events(self, request: CanonicalRequest, response: CanonicalResponse) -> Iterator[bytes]:
        start = _message(request.model, [], None, response)
        start["usage"] = {"input_tokens": response.prompt_tokens, "output_tokens": 0}
        yield sse("message_start", {"type": "message_start", "message": start})
        for index, block in enumerate(self._blocks(response)):
            if block["type"] == "text":
                opened = {"type": "text", "text": ""}
                delta = {"type": "text_delta", "text": block["text"]}
            else:
                opened = {**block, "input": {}}
                delta = {
                    "type": "input_json_delta",
                    "partial_json": json.dumps(block["input"], ensure_ascii=False),
                }
            yield sse(
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": opened},
            )
            yield sse("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta})
            yield sse("content_block_stop", {"type": "content_block_stop", "index": index})
        delta = {"stop_reason": self._stop_reason(response), "stop_sequence": None}
        usage = {"output_tokens": response.completion_tokens}
        yield sse("message_delta", {"type": "message_delta", "delta": delta, "usage": usage})
        yield sse("message_stop", {"type": "message_stop"})

    def error_body(self, status: int, message: str, code: str | None = None) -> dict[str, Any]:
        kind = _ERROR_TYPES.get(status, "api_error")
        return {"type": "error", "error": {"type": kind, "message": message}}

    def stream_error(self, status: int, message: str, code: str | None = None) -> bytes:
        return sse("error", self.error_body(status, message, code))


ADAPTERS.register("anthropic_messages", AnthropicAdapter())
