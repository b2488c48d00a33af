"""OpenAI chat completions (`/v1/chat/completions`): the canonical form itself, so mostly validation."""

from collections.abc import Iterator
from typing import Any

from forge_eval.proxy._adapters._adapter import ADAPTERS, ConversationStore, new_id, now, sse
from forge_eval.proxy._adapters._fields import common_fields, field, required, untranslated
from forge_eval.proxy._adapters._openai import OpenAIAdapter, stream_end
from forge_eval.proxy._canonical import BadRequest, CanonicalRequest, CanonicalResponse

_ROLES = {"system", "developer", "user", "assistant", "tool", "function"}
#: What `parse` reads into the canonical request; every other field is served as sent.
_TRANSLATED = frozenset(
    {"model", "messages", "tools", "tool_choice", "response_format", "stream", "stream_options"}
    | {"max_completion_tokens", "max_tokens", "stop"}
)


def _message(raw: Any, i: int) -> dict[str, Any]:
    if not isinstance(raw, dict) or not isinstance(raw.get("role"), str) or raw["role"] not in _ROLES:
        raise BadRequest(f"messages[{i}] must be an object with a role in {sorted(_ROLES)}")
    message = dict(raw)
    if message["role"] == "developer":  # chat templates know "system"; the meaning is the same
        message["role"] = "system"
    return message


def _tool(raw: Any, i: int) -> dict[str, Any]:
    if (
        not isinstance(raw, dict)
        or not isinstance(raw.get("function"), dict)
        or "name" not in raw["function"]
    ):
        raise BadRequest(f"tools[{i}] must be {{'type': 'function', 'function': {{'name': ...}}}}")
    return raw


class ChatAdapter(OpenAIAdapter):
    api = "chat"

    def parse(self, body: dict[str, Any], conversations: ConversationStore) -> CanonicalRequest:
        messages = required(body, "messages", list)
        if not messages:
            raise BadRequest("'messages' must not be empty")
        options = field(body, "stream_options", dict) or {}
        return CanonicalRequest(
            messages=[_message(m, i) for i, m in enumerate(messages)],
            tools=[_tool(t, i) for i, t in enumerate(field(body, "tools", list) or [])],
            tool_choice=body.get("tool_choice"),
            response_format=field(body, "response_format", dict),
            include_usage=bool(options.get("include_usage")),
            extra=untranslated(body, _TRANSLATED),
            **common_fields(body, ("max_completion_tokens", "max_tokens"), "stop"),
        )

    def render(self, request: CanonicalRequest, response: CanonicalResponse) -> dict[str, Any]:
        message = response.assistant_message()
        if response.reasoning:
            message["reasoning_content"] = response.reasoning
        return {
            "id": new_id("chatcmpl-"),
            "object": "chat.completion",
            "created": now(),
            "model": request.model,
            "choices": [
                {"index": 0, "message": message, "finish_reason": response.finish_reason, "logprobs": None}
            ],
            "usage": response.usage,
        }

    def stream_events(self, request: CanonicalRequest, response: CanonicalResponse) -> Iterator[bytes]:
        head = {"id": new_id("chatcmpl-"), "object": "chat.completion.chunk", "created": now()}
        head["model"] = request.model

        def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
            return sse(None, {**head, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})

        yield chunk({"role": "assistant", "content": ""})
        if response.reasoning:
            yield chunk({"reasoning_content": response.reasoning})
        if response.text:
            yield chunk({"content": response.text})
        for i, call in enumerate(response.tool_calls):
            start = {"index": i, "id": call.id, "type": "function"}
            yield chunk({"tool_calls": [{**start, "function": {"name": call.name, "arguments": ""}}]})
            yield chunk({"tool_calls": [{"index": i, "function": {"arguments": call.arguments}}]})
        yield chunk({}, response.finish_reason)
        yield from stream_end(head, request, response)


ADAPTERS.register("chat", ChatAdapter())
