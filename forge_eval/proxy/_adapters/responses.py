"""OpenAI Responses (`/v1/responses`, Codex CLI): input items <-> chat messages, freeform tools, SSE.

Codex sends its system prompt as `developer` input items, tool results as `function_call_output` items
and `apply_patch` as a `custom` (freeform) tool; a freeform tool is served to the chat upstream as a
function with one string parameter `input`, and its call is turned back into a `custom_tool_call`.
"""

import json
from collections.abc import Iterator
from typing import Any

from forge_eval.proxy._adapters._adapter import ADAPTERS, ConversationStore, new_id, now, sse
from forge_eval.proxy._adapters._fields import common_fields, field
from forge_eval.proxy._adapters._openai import OpenAIAdapter
from forge_eval.proxy._canonical import BadRequest, CanonicalRequest, CanonicalResponse, ToolCall

_TEXT_PARTS = {"input_text", "output_text", "text", "refusal", "summary_text"}


def _content(content: Any, where: str) -> str | list[dict[str, Any]]:
    """Message content as chat content: a string, or parts when an image is present."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise BadRequest(f"{where}.content must be a string or a list of parts")
    parts: list[dict[str, Any]] = []
    for part in content:
        kind = part.get("type") if isinstance(part, dict) else None
        if isinstance(kind, str) and kind in _TEXT_PARTS:
            parts.append({"type": "text", "text": str(part.get("text", part.get("refusal", "")))})
        elif kind == "input_image":
            url = part.get("image_url") or part.get("file_id") or ""
            parts.append({"type": "image_url", "image_url": {"url": url}})
        else:
            raise BadRequest(f"{where}: unsupported content part type {kind!r}")
    if all(p["type"] == "text" for p in parts):
        return "".join(p["text"] for p in parts)
    return parts


def _output_text(output: Any) -> str | list[dict[str, Any]]:
    return output if isinstance(output, str) else _content(output, "function_call_output.output")


def _custom_arguments(text: str) -> str:
    return json.dumps({"input": text}, ensure_ascii=False)


class _Messages:
    """Accumulates chat messages, merging consecutive tool calls into one assistant message."""

    def __init__(self, start: list[dict[str, Any]]) -> None:
        self.items = list(start)

    def add(self, message: dict[str, Any]) -> None:
        self.items.append(message)

    def add_call(self, call: dict[str, Any]) -> None:
        last = self.items[-1] if self.items else None
        if last is not None and last["role"] == "assistant":
            last.setdefault("tool_calls", []).append(call)
        else:
            self.items.append({"role": "assistant", "content": None, "tool_calls": [call]})


def _function(name: str, arguments: str, call_id: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def _input_items(items: list[Any], messages: _Messages) -> None:
    for i, item in enumerate(items):
        where = f"input[{i}]"
        if not isinstance(item, dict):
            raise BadRequest(f"{where} must be an object")
        kind = item.get("type", "message")
        if kind == "message":
            role = item.get("role")
            if role not in ("user", "assistant", "system", "developer"):
                raise BadRequest(f"{where}.role must be user, assistant, system or developer, got {role!r}")
            role = "system" if role == "developer" else role
            messages.add({"role": role, "content": _content(item.get("content", ""), where)})
        elif kind == "function_call":
            messages.add_call(
                _function(str(item.get("name")), str(item.get("arguments", "")), _call_id(item))
            )
        elif kind == "custom_tool_call":
            arguments = _custom_arguments(str(item.get("input", "")))
            messages.add_call(_function(str(item.get("name")), arguments, _call_id(item)))
        elif kind in ("function_call_output", "custom_tool_call_output"):
            output = _output_text(item.get("output", ""))
            messages.add({"role": "tool", "tool_call_id": _call_id(item), "content": output})
        elif kind == "reasoning":
            continue  # encrypted/summarized reasoning of an earlier turn: nothing a chat upstream can use
        else:
            raise BadRequest(f"{where}: unsupported input item type {kind!r}")


def _call_id(item: dict[str, Any]) -> str:
    call_id = item.get("call_id") or item.get("id")
    if not isinstance(call_id, str):
        raise BadRequest(f"{item.get('type')} item without a call_id")
    return call_id


def _tools(raw: list[Any]) -> tuple[list[dict[str, Any]], frozenset[str]]:
    """Function and freeform tools as chat functions; hosted tools (web_search, ...) are not served."""
    tools: list[dict[str, Any]] = []
    custom: set[str] = set()
    for i, tool in enumerate(raw):
        if not isinstance(tool, dict):
            raise BadRequest(f"tools[{i}] must be an object")
        kind = tool.get("type")
        if kind == "function":
            function = {k: tool[k] for k in ("name", "description", "parameters", "strict") if k in tool}
            tools.append({"type": "function", "function": function})
        elif kind == "custom":
            if not isinstance(tool.get("name"), str):
                raise BadRequest(f"tools[{i}] (custom) needs a name (a string), got {tool.get('name')!r}")
            custom.add(tool["name"])
            described = tool.get("description", "")
            grammar = (
                tool.get("format", {}).get("definition") if isinstance(tool.get("format"), dict) else None
            )
            parameters = {
                "type": "object",
                "properties": {"input": {"type": "string", "description": grammar or "freeform input"}},
                "required": ["input"],
            }
            tools.append(
                {
                    "type": "function",
                    "function": {"name": tool["name"], "description": described, "parameters": parameters},
                }
            )
    return tools, frozenset(custom)


def _tool_choice(choice: Any) -> Any:
    if isinstance(choice, dict) and choice.get("type") in ("function", "custom") and "name" in choice:
        return {"type": "function", "function": {"name": choice["name"]}}
    return choice if isinstance(choice, str) else None


class ResponsesAdapter(OpenAIAdapter):
    api = "responses"

    def parse(self, body: dict[str, Any], conversations: ConversationStore) -> CanonicalRequest:
        start: list[dict[str, Any]] = []
        previous = field(body, "previous_response_id", str)
        if previous is not None:
            earlier = conversations.get(previous)
            if earlier is None:
                raise BadRequest(
                    f"previous response {previous!r} not found", 400, "previous_response_not_found"
                )
            start = earlier
        messages = _Messages(start)
        raw_input = body.get("input")
        if isinstance(raw_input, str):
            messages.add({"role": "user", "content": raw_input})
        elif isinstance(raw_input, list):
            _input_items(raw_input, messages)
        elif raw_input is not None:
            raise BadRequest("'input' must be a string or a list of items")
        instructions = field(body, "instructions", str)
        if instructions:  # instructions apply to this response only; they are not carried to the next
            messages.items.insert(0, {"role": "system", "content": instructions})
        if not messages.items:
            raise BadRequest("the request has no input")
        tools, custom = _tools(field(body, "tools", list) or [])
        text = field(body, "text", dict) or {}
        fmt = text.get("format") if isinstance(text.get("format"), dict) else None
        response_format = None
        if fmt and fmt.get("type") == "json_schema":
            schema = {k: fmt[k] for k in ("name", "schema", "strict") if k in fmt}
            response_format = {"type": "json_schema", "json_schema": schema}
        return CanonicalRequest(
            messages=messages.items,
            tools=tools,
            tool_choice=_tool_choice(body.get("tool_choice")) if tools else None,
            response_format=response_format,
            include_usage=True,
            **common_fields(body, ("max_output_tokens",), None),
            custom_tools=custom,
            adapter_state={"instructions": bool(instructions), "response_id": new_id("resp_")},
        )

    def _output(self, request: CanonicalRequest, response: CanonicalResponse) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        if response.text:
            part = {"type": "output_text", "text": response.text, "annotations": []}
            items.append(
                {
                    "type": "message",
                    "id": new_id("msg_"),
                    "role": "assistant",
                    "status": "completed",
                    "content": [part],
                }
            )
        for call in response.tool_calls:
            items.append(_call_item(call, call.name in request.custom_tools))
        return items

    def _response(
        self,
        request: CanonicalRequest,
        response: CanonicalResponse,
        output: list[dict[str, Any]],
        status: str,
        response_id: str,
    ) -> dict[str, Any]:
        usage = {
            "input_tokens": response.prompt_tokens,
            "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
            "output_tokens": response.completion_tokens,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": response.prompt_tokens + response.completion_tokens,
        }
        incomplete = {"reason": "max_output_tokens"} if response.finish_reason == "length" else None
        return {
            "id": response_id,
            "object": "response",
            "created_at": now(),
            "model": request.model,
            "status": "incomplete" if incomplete and status == "completed" else status,
            "incomplete_details": incomplete,
            "error": None,
            "output": output,
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": [],
            "usage": usage if status != "in_progress" else None,
        }

    def render(self, request: CanonicalRequest, response: CanonicalResponse) -> dict[str, Any]:
        response_id = request.adapter_state["response_id"]
        return self._response(request, response, self._output(request, response), "completed", response_id)

    def stream_events(self, request: CanonicalRequest, response: CanonicalResponse) -> Iterator[bytes]:
        response_id = request.adapter_state["response_id"]
        output = self._output(request, response)
        seq = iter(range(1 << 30))

        def event(kind: str, **data: Any) -> bytes:
            return sse(kind, {"type": kind, "sequence_number": next(seq), **data})

        shell = self._response(request, response, [], "in_progress", response_id)
        yield event("response.created", response=shell)
        yield event("response.in_progress", response=shell)
        for index, item in enumerate(output):
            yield from _item_events(event, index, item)
        yield event(
            "response.completed", response=self._response(request, response, output, "completed", response_id)
        )

    def remember(
        self, request: CanonicalRequest, response: CanonicalResponse, conversations: ConversationStore
    ) -> None:
        carried = request.messages[1:] if request.adapter_state.get("instructions") else request.messages
        conversations.put(request.adapter_state["response_id"], [*carried, response.assistant_message()])

    def stream_error(self, status: int, message: str, code: str | None = None) -> bytes:
        failed = {
            "id": new_id("resp_"),
            "object": "response",
            "status": "failed",
            "output": [],
            "error": {"code": code or "server_error", "message": message},
        }
        return sse("response.failed", {"type": "response.failed", "sequence_number": 0, "response": failed})


def _call_item(call: ToolCall, custom: bool) -> dict[str, Any]:
    if custom:
        try:
            text = json.loads(call.arguments).get("input", call.arguments)
        except (ValueError, AttributeError):
            text = call.arguments
        return {
            "type": "custom_tool_call",
            "id": new_id("ctc_"),
            "call_id": call.id,
            "name": call.name,
            "input": str(text),
            "status": "completed",
        }
    return {
        "type": "function_call",
        "id": new_id("fc_"),
        "call_id": call.id,
        "name": call.name,
        "arguments": call.arguments,
        "status": "completed",
    }


def _item_events(event: Any, index: int, item: dict[str, Any]) -> Iterator[bytes]:
    """The added/delta/done sequence of one output item, as the Responses API streams it."""
    kind = item["type"]
    empty = {**item, "status": "in_progress"}
    if kind == "message":
        empty["content"] = []
    elif kind == "function_call":
        empty["arguments"] = ""
    else:
        empty["input"] = ""
    yield event("response.output_item.added", output_index=index, item=empty)
    if kind == "message":
        part = item["content"][0]
        ids = {"item_id": item["id"], "output_index": index, "content_index": 0}
        yield event("response.content_part.added", **ids, part={**part, "text": ""})
        yield event("response.output_text.delta", **ids, delta=part["text"], logprobs=[])
        yield event("response.output_text.done", **ids, text=part["text"], logprobs=[])
        yield event("response.content_part.done", **ids, part=part)
    elif kind == "function_call":
        ids = {"item_id": item["id"], "output_index": index}
        yield event("response.function_call_arguments.delta", **ids, delta=item["arguments"])
        yield event(
            "response.function_call_arguments.done", **ids, arguments=item["arguments"], name=item["name"]
        )
    else:
        ids = {"item_id": item["id"], "output_index": index}
        yield event("response.custom_tool_call_input.delta", **ids, delta=item["input"])
        yield event("response.custom_tool_call_input.done", **ids, input=item["input"])
    yield event("response.output_item.done", output_index=index, item=item)


ADAPTERS.register("responses", ResponsesAdapter())
