"""OpenAI legacy completions (`/v1/completions`): a raw prompt, served without a chat template."""

from collections.abc import Iterator
from typing import Any

from forge_eval.proxy._adapters._adapter import ADAPTERS, ConversationStore, new_id, now, sse
from forge_eval.proxy._adapters._fields import common_fields, untranslated
from forge_eval.proxy._adapters._openai import OpenAIAdapter, stream_end
from forge_eval.proxy._canonical import BadRequest, CanonicalRequest, CanonicalResponse

#: What `parse` reads into the canonical request; every other field is served as sent.
_TRANSLATED = frozenset({"model", "prompt", "stream", "stream_options", "max_tokens", "stop"})


def _prompt(value: Any) -> str | list[int]:
    """A single prompt: text or token ids (a one-element batch is unwrapped; larger batches are refused)."""
    if isinstance(value, list) and len(value) == 1 and isinstance(value[0], str | list):
        value = value[0]
    if isinstance(value, str):
        return value
    if (
        isinstance(value, list)
        and value
        and all(isinstance(t, int) and not isinstance(t, bool) for t in value)
    ):
        return value
    raise BadRequest("'prompt' must be one string or one list of token ids (batched prompts are not served)")


class CompletionsAdapter(OpenAIAdapter):
    api = "completions"

    def parse(self, body: dict[str, Any], conversations: ConversationStore) -> CanonicalRequest:
        if body.get("prompt") is None:
            raise BadRequest("missing required field 'prompt'")
        options = body.get("stream_options") if isinstance(body.get("stream_options"), dict) else {}
        return CanonicalRequest(
            messages=[],
            prompt=_prompt(body["prompt"]),
            include_usage=bool(options.get("include_usage")),
            extra=untranslated(body, _TRANSLATED),
            **common_fields(body, ("max_tokens",), "stop"),
        )

    def _choice(self, text: str, finish: str | None) -> dict[str, Any]:
        return {"index": 0, "text": text, "logprobs": None, "finish_reason": finish}

    def render(self, request: CanonicalRequest, response: CanonicalResponse) -> dict[str, Any]:
        return {
            "id": new_id("cmpl-"),
            "object": "text_completion",
            "created": now(),
            "model": request.model,
            "choices": [self._choice(response.text, response.finish_reason)],
            "usage": response.usage,
        }

    def stream_events(self, request: CanonicalRequest, response: CanonicalResponse) -> Iterator[bytes]:
        head = {"id": new_id("cmpl-"), "object": "text_completion", "created": now(), "model": request.model}
        if response.text:
            yield sse(None, {**head, "choices": [self._choice(response.text, None)]})
        yield sse(None, {**head, "choices": [self._choice("", response.finish_reason)]})
        yield from stream_end(head, request, response)


ADAPTERS.register("completions", CompletionsAdapter())
