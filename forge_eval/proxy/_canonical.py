"""The canonical request/response every API adapter translates to and from.

The canonical request *is* an OpenAI chat-completions body (messages + function tools), because that is
what every upstream we serve from (vLLM, SGLang, llama.cpp, Inspect) accepts, so the served request can be
stored as-is. The completions API is the one exception: it carries a raw `prompt` instead of messages.

Fields of a chat or completions body that the canonical form does not translate (`extra`: Claw-Eval's
`extra_body` such as `reasoning: {effort: high}`, `reasoning_effort`, `parallel_tool_calls`,
`chat_template_kwargs`, ...) are served unchanged, and so are the client's sampling parameters the rollout
does not pin: the request served (and recorded) is the harness's, with only the rollout's pins, the token
cap and the proxy's own fields (`n`, `stream`, token ids) set by us. A field the endpoint rejects gives
the endpoint's own error.

One field is ours: a `tool` message whose result the harness marked as its tool's failure carries
`is_error: true` (`records.TOOL_ERROR_KEY`; Anthropic's `tool_result.is_error`). Chat upstreams ignore
message fields they do not know (vLLM, SGLang and llama.cpp read role, content, tool_calls,
tool_call_id), so the body is still sent as-is, and the record keeps the status as part of the request
served.
"""

from dataclasses import dataclass, field
from typing import Any

# client parameters that change how tokens are sampled: recorded, then replaced by the rollout's pinned ones
SAMPLING_KEYS = (
    "temperature",
    "top_p",
    "top_k",
    "min_p",
    "presence_penalty",
    "frequency_penalty",
    "repetition_penalty",
    "seed",
    "n",
)


class BadRequest(Exception):
    """A request an adapter cannot translate: answered with `status` in the API's own error format."""

    def __init__(self, message: str, status: int = 400, code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.code = code

    @property
    def headers(self) -> list[tuple[bytes, bytes]]:
        """A body left unread (too slow, too large) ends the connection: what follows is not a request."""
        return [(b"connection", b"close")] if self.status in (408, 413) else []


@dataclass
class ToolCall:
    """One tool call of the model. `custom` marks a freeform tool whose arguments are `{"input": text}`."""

    id: str
    name: str
    arguments: str
    custom: bool = False


@dataclass
class CanonicalRequest:
    """A harness request in chat-completions terms, plus what the adapter needs to answer in kind."""

    model: str
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] = field(default_factory=list)
    tool_choice: Any = None
    max_tokens: int | None = None
    stop: list[str] | None = None
    response_format: dict[str, Any] | None = None
    client_sampling: dict[str, Any] = field(default_factory=dict)
    stream: bool = False
    include_usage: bool = False
    custom_tools: frozenset[str] = frozenset()
    prompt: str | list[int] | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    adapter_state: dict[str, Any] = field(default_factory=dict)

    @property
    def is_completion(self) -> bool:
        """True for the legacy completions API (raw prompt, no chat template)."""
        return self.prompt is not None

    def body(self, model: str, sampling: dict[str, Any]) -> dict[str, Any]:
        """The body to send upstream: this request served as `model`, the client's sampling under the pinned
        `sampling`, and every field of the harness's body the adapter did not translate (`extra`)."""
        body: dict[str, Any] = {**self.extra, "model": model}
        if self.is_completion:
            body["prompt"] = self.prompt
        else:
            body["messages"] = _merge_leading_system(self.messages)
            if self.tools:
                body["tools"] = self.tools
                if self.tool_choice is not None:
                    body["tool_choice"] = self.tool_choice
            if self.response_format is not None:
                body["response_format"] = self.response_format
        pinned = dict(sampling)
        cap = pinned.pop("max_tokens", None)
        wanted = [t for t in (self.max_tokens, cap) if t is not None]
        if wanted:
            body["max_tokens"] = min(wanted)
        if self.stop:
            body["stop"] = self.stop
        body.update(self.client_sampling)
        body.update(pinned)
        body["n"] = 1
        body["stream"] = False
        return body


def _merge_leading_system(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One system message at the start: Codex sends two developer items, and several chat templates
    (llama.cpp's, some Qwen ones) refuse a system message that is not the first message."""
    count = 0
    while count < len(messages) and messages[count].get("role") == "system":
        count += 1
    leading = messages[:count]
    if count < 2 or not all(isinstance(m.get("content"), str) for m in leading):
        return messages
    return [{"role": "system", "content": "\n\n".join(m["content"] for m in leading)}, *messages[count:]]


@dataclass
class CanonicalResponse:
    """One assistant turn from the upstream, with the token data when the upstream returned it."""

    text: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    finish_reason: str = "stop"
    reasoning: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    model: str = ""
    prompt_token_ids: list[int] | None = None
    completion_token_ids: list[int] | None = None
    completion_logprobs: list[float] | None = None
    policy_version: int | None = None

    def assistant_message(self) -> dict[str, Any]:
        """The turn as a chat message (what a follow-up request must contain to continue it)."""
        message: dict[str, Any] = {"role": "assistant", "content": self.text or None}
        if self.tool_calls:
            message["tool_calls"] = [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                for c in self.tool_calls
            ]
        return message

    @property
    def usage(self) -> dict[str, int]:
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.prompt_tokens + self.completion_tokens,
        }
