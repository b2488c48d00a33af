"""OpenAI-compatible upstream answers (vLLM, SGLang, llama.cpp) -> `CanonicalResponse`, token ids included."""

import json
import uuid
from typing import Any

from forge_eval.proxy._canonical import CanonicalResponse, ToolCall


def _logprobs(choice: dict[str, Any]) -> list[float] | None:
    logprobs = choice.get("logprobs")
    if not isinstance(logprobs, dict):
        return None
    if isinstance(logprobs.get("content"), list):  # chat
        return [float(t.get("logprob", 0.0)) for t in logprobs["content"]]
    if isinstance(logprobs.get("token_logprobs"), list):  # completions
        return [float(x) if x is not None else 0.0 for x in logprobs["token_logprobs"]]
    return None


def _ids(value: Any) -> list[int] | None:
    return value if isinstance(value, list) else None


def without_token_data(raw: dict[str, Any]) -> dict[str, Any]:
    """The upstream answer minus its token ids and logprobs, which the record keeps in typed fields
    (storing them twice would double the record of every call)."""
    slim = {k: v for k, v in raw.items() if k not in ("prompt_token_ids", "response_token_ids")}
    slim["choices"] = [
        {k: v for k, v in c.items() if k not in ("token_ids", "prompt_token_ids", "logprobs")}
        for c in raw.get("choices", [])
        if isinstance(c, dict)
    ]
    return slim


def _tool_calls(message: dict[str, Any]) -> list[ToolCall]:
    calls = []
    for raw in message.get("tool_calls") or []:
        function = raw.get("function") or {}
        arguments = function.get("arguments")
        if not isinstance(arguments, str):  # some servers return parsed arguments
            arguments = json.dumps(arguments or {})
        calls.append(
            ToolCall(
                id=raw.get("id") or f"call_{uuid.uuid4().hex[:24]}",
                name=function.get("name", ""),
                arguments=arguments,
            )
        )
    return calls


def parse_upstream(raw: dict[str, Any], completion: bool) -> CanonicalResponse:
    """The first choice of a chat (or, with `completion`, a completions) response."""
    choices = raw.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise ValueError("upstream response has no choices")
    choice = choices[0]
    usage = raw.get("usage") or {}
    if completion:
        text, calls, reasoning = str(choice.get("text") or ""), [], None
    else:
        message = choice.get("message") or {}
        text = message.get("content") or ""
        if isinstance(text, list):
            text = "".join(str(p.get("text", "")) for p in text if isinstance(p, dict))
        text = str(text)
        calls = _tool_calls(message)
        reasoning = message.get("reasoning_content") or message.get("reasoning")
    finish = str(choice.get("finish_reason") or "stop")
    if calls and finish == "stop":
        finish = "tool_calls"
    return CanonicalResponse(
        text=text,
        tool_calls=calls,
        finish_reason=finish,
        reasoning=reasoning if isinstance(reasoning, str) else None,
        prompt_tokens=int(usage.get("prompt_tokens") or 0),
        completion_tokens=int(usage.get("completion_tokens") or 0),
        model=str(raw.get("model", "")),
        prompt_token_ids=_ids(raw.get("prompt_token_ids") or choice.get("prompt_token_ids")),
        completion_token_ids=_ids(choice.get("token_ids") or raw.get("response_token_ids")),
        completion_logprobs=_logprobs(choice),
    )
