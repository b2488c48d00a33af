"""What the OpenAI-shaped adapters (chat, completions, responses) share: the error body and the end of a
chunked stream."""

from collections.abc import Iterator
from typing import Any

from forge_eval.proxy._adapters._adapter import Adapter, sse
from forge_eval.proxy._canonical import CanonicalRequest, CanonicalResponse

_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    408: "timeout",
    413: "invalid_request_error",
    415: "invalid_request_error",
    429: "rate_limit_error",
}


def openai_error(status: int, message: str, code: str | None = None) -> dict[str, Any]:
    kind = _TYPES.get(status, "server_error")
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


class OpenAIAdapter(Adapter):
    """An adapter whose errors are OpenAI's."""

    def error_body(self, status: int, message: str, code: str | None = None) -> dict[str, Any]:
        return openai_error(status, message, code)


def stream_end(
    head: dict[str, Any], request: CanonicalRequest, response: CanonicalResponse
) -> Iterator[bytes]:
    """The end of a chat or completions stream: the usage chunk when the client asked for it, `[DONE]`."""
    if request.include_usage:
        yield sse(None, {**head, "choices": [], "usage": response.usage})
    yield b"data: [DONE]\n\n"
