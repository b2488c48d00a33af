"""Inspect models as the upstream, so that in evaluations every harness call is also an Inspect `ModelEvent`.

Calls go through `Model.generate()`, which records the event in the transcript of the sample whose
context the call runs in: serve the proxy from inside the sample (`serve_in_task`) so that its request
handlers inherit that context. This is the in-process path (~15 ms/call in Inspect's own bridge,
measured) rather than the sandbox bridge's ~2 s file-polling.

A tool result the harness marked as failed (`is_error`) is marked in the transcript as the message's
metadata `is_error`, not as Inspect's `ChatMessageTool.error`: providers render an error in their own way
(OpenAI-style ones send `Error: <message>` instead of the content), which would change the prompt the
harness sent, while metadata is never sent to a model.

The served body's fields that have no `GenerateConfig` setting (the harness's untranslated fields, such
as Claw-Eval's `reasoning: {effort: high}`, and sampling keys Inspect does not name, such as `min_p`) go
to the provider as `extra_body`, which OpenAI-compatible providers merge into their request unchanged.
"""

import json
import time
from typing import Any

from inspect_ai.model import (
    ChatMessage,
    ChatMessageTool,
    GenerateConfig,
    Model,
    ModelOutput,
    get_model,
    messages_from_openai,
)
from inspect_ai.tool import ToolFunction, ToolInfo, ToolParams

from forge_eval.proxy._canonical import CanonicalRequest, CanonicalResponse, ToolCall
from forge_eval.proxy._upstream import UpstreamError, UpstreamResult, http_error_kind
from forge_eval.proxy.records import TOOL_ERROR_KEY, ErrorKind, UpstreamFailure

_FINISH = {
    "stop": "stop",
    "tool_calls": "tool_calls",
    "max_tokens": "length",
    "model_length": "length",
    "content_filter": "content_filter",
}
_CONFIG_KEYS = ("temperature", "top_p", "top_k", "seed", "presence_penalty", "frequency_penalty")
#: Served fields `complete` passes in its own way (messages, tools, the cap), or the proxy's own.
_HANDLED = frozenset({"model", "messages", "tools", "tool_choice", "max_tokens", "stop", "n", "stream"})


def _tool_info(tool: dict[str, Any]) -> ToolInfo:
    function = tool["function"]
    schema = function.get("parameters") or {"type": "object", "properties": {}}
    params = ToolParams.model_validate(
        {"type": "object", "properties": schema.get("properties", {}), "required": schema.get("required", [])}
    )
    return ToolInfo(
        name=function["name"], description=function.get("description") or function["name"], parameters=params
    )


def _tool_choice(choice: Any) -> Any:
    if isinstance(choice, dict):
        return ToolFunction(name=choice.get("function", {}).get("name", ""))
    return (
        {"auto": "auto", "none": "none", "required": "any"}.get(choice) if isinstance(choice, str) else None
    )


def _arguments(call: Any) -> str:
    """A tool call's arguments as the harness would get them from the model's API: JSON, or, where
    Inspect could not parse them, the text the model wrote (Inspect's parse error quotes it)."""
    if not call.parse_error:
        return json.dumps(call.arguments)
    quoted = call.parse_error.partition("\n\n")[2].rpartition("\n\nError details:")[0]
    return quoted or call.parse_error


async def _inspect_messages(chat: list[dict[str, Any]]) -> list[ChatMessage]:
    """The request's messages as Inspect's, the harness's tool error statuses in their metadata."""
    failed = {m.get("tool_call_id") for m in chat if m.get("role") == "tool" and m.get(TOOL_ERROR_KEY)}
    messages: list[ChatMessage] = await messages_from_openai(chat)  # type: ignore[arg-type]
    for message in messages:
        if isinstance(message, ChatMessageTool) and message.tool_call_id in failed:
            message.metadata = {**(message.metadata or {}), TOOL_ERROR_KEY: True}
    return messages


def _response(output: ModelOutput) -> CanonicalResponse:
    message = output.message
    calls = [ToolCall(id=c.id, name=c.function, arguments=_arguments(c)) for c in message.tool_calls or []]
    usage = output.usage
    return CanonicalResponse(
        text=message.text,
        tool_calls=calls,
        finish_reason="tool_calls" if calls else _FINISH.get(output.stop_reason, "stop"),
        prompt_tokens=usage.input_tokens if usage else 0,
        completion_tokens=usage.output_tokens if usage else 0,
        model=output.model,
    )


def _provider_message(error: BaseException) -> str:
    """The provider's own error text, for the harness. Inspect wraps a provider's error in a
    ModelGenerateError around the whole request; the OpenAI and Anthropic SDK errors it wraps (its cause)
    keep the parsed error object in `body`, while their str() is a Python repr of it, which a harness
    cannot read (OpenClaw redacts it as malformed JSON and so never sees that the context overflowed).
    The record keeps the full text."""
    seen: set[int] = set()
    cause: BaseException | None = error
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        body = getattr(cause, "body", None)
        inner = body.get("error", body) if isinstance(body, dict) else None
        if isinstance(inner, dict) and isinstance(inner.get("message"), str) and inner["message"]:
            return inner["message"][:500]
        cause = cause.__cause__ or cause.__context__
    return f"{type(error).__name__}: {error}"[:500]


class InspectUpstream:
    """Serve canonical chat requests with an Inspect model.

    Args:
        model: A model, a model name, or None for the active model of the running sample.
        config: Generation settings merged under the rollout's pinned sampling.
    """

    def __init__(self, model: Model | str | None = None, config: GenerateConfig | None = None) -> None:
        self._model = model
        self.config = config or GenerateConfig()

    def _resolve(self) -> Model:
        return self._model if isinstance(self._model, Model) else get_model(self._model)

    async def complete(
        self, request: CanonicalRequest, sampling: dict[str, Any], *, route_key: str, call_seq: int
    ) -> UpstreamResult:
        model = self._resolve()
        served = request.body(str(model), sampling)
        if request.is_completion:
            raise UpstreamError(
                "http_4xx",
                "an Inspect model serves chat requests only, not /v1/completions",
                400,
                served_request=served,
            )
        pinned = {k: served[k] for k in _CONFIG_KEYS if k in served}
        extra = {k: v for k, v in served.items() if k not in _HANDLED and k not in _CONFIG_KEYS}
        config = self.config.merge(
            GenerateConfig(
                max_tokens=served.get("max_tokens"),
                stop_seqs=request.stop,
                extra_body=extra or None,
                **pinned,
            )
        )
        messages = await _inspect_messages(request.messages)
        tools = [_tool_info(t) for t in request.tools]
        t_start = time.time()
        try:
            output = await model.generate(
                messages, tools=tools, tool_choice=_tool_choice(request.tool_choice), config=config
            )
        except Exception as e:  # any provider error: recorded on the call and answered to the harness
            # A provider's HTTP client error (`status_code` of the OpenAI and Anthropic SDKs, e.g. a prompt
            # over the context) reaches the harness as that 4xx, which it does not retry; the rest: a 502.
            status = getattr(e, "status_code", None)
            client_error = isinstance(status, int) and 400 <= status < 500
            kind: ErrorKind = http_error_kind(status, str(e)) if client_error else "transport"
            failure = UpstreamFailure(
                kind=kind,
                http_status=status if client_error else None,
                message=f"{type(e).__name__}: {e}"[:500],
                at=time.time(),
                endpoint=f"inspect:{model}",
                call_seq=call_seq,
            )
            raise UpstreamError(
                kind, _provider_message(e), failure.http_status, [failure], served, f"inspect:{model}"
            ) from e
        if output.error:
            failure = UpstreamFailure(
                kind="http_5xx",
                message=output.error[:500],
                at=time.time(),
                endpoint=f"inspect:{model}",
                call_seq=call_seq,
            )
            raise UpstreamError("http_5xx", output.error, None, [failure], served, f"inspect:{model}")
        return UpstreamResult(
            _response(output),
            served,
            output.model_dump(mode="json", exclude_none=True),
            f"inspect:{model}",
            200,
            [],
            t_start,
            time.time(),
        )

    async def count_tokens(self, request: CanonicalRequest) -> int:
        messages = await messages_from_openai(request.messages)  # type: ignore[arg-type]
        return await self._resolve().count_tokens(messages)

    async def aclose(self) -> None:
        return None
