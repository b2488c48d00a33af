"""The adapter interface: one API shape (chat, responses, anthropic, completions) onto the canonical form.

Each adapter is written once and used both for JSON answers and for the synthesized SSE stream, so a
streamed and a non-streamed answer to the same upstream response carry the same content.
"""

import os
import time
from abc import ABC, abstractmethod
from collections.abc import Iterator
from typing import Any, ClassVar

from forge_eval._registry import Registry
from forge_eval.proxy._canonical import CanonicalRequest, CanonicalResponse
from forge_eval.proxy._json import dumps
from forge_eval.proxy.records import Api


class ConversationStore:
    """Conversations by response id, so a Responses request can continue from `previous_response_id`.

    Bounded: a rollout keeps its latest `capacity` responses (harnesses chain from the last one; Codex
    sends `store: false` and the whole input every time, so it needs none).
    """

    def __init__(self, capacity: int = 32) -> None:
        self.capacity = capacity
        self._items: dict[str, list[dict[str, Any]]] = {}

    def get(self, response_id: str) -> list[dict[str, Any]] | None:
        return self._items.get(response_id)

    def put(self, response_id: str, messages: list[dict[str, Any]]) -> None:
        self._items[response_id] = messages
        while len(self._items) > self.capacity:
            self._items.pop(next(iter(self._items)))


# characters `str.splitlines` breaks a line at that JSON leaves unescaped (httpx's line reader uses it)
_LINE_BREAKS = ((b"\xc2\x85", b"\\u0085"), (b"\xe2\x80\xa8", b"\\u2028"), (b"\xe2\x80\xa9", b"\\u2029"))


def _one_line(data: bytes) -> bytes:
    for raw, escaped in _LINE_BREAKS:
        if raw in data:
            data = data.replace(raw, escaped)
    return data


def sse(event: str | None, data: dict[str, Any] | str) -> bytes:
    """One server-sent event (`event:` line only when the API names its events)."""
    payload = data.encode() if isinstance(data, str) else _one_line(dumps(data))
    head = b"event: " + event.encode() + b"\n" if event else b""
    return head + b"data: " + payload + b"\n\n"


def new_id(prefix: str) -> str:
    """A random id: 24 hex digits after `prefix` (12 bytes of `os.urandom`, a third of `uuid4`'s cost)."""
    return prefix + os.urandom(12).hex()


def now() -> int:
    return int(time.time())


class Adapter(ABC):
    """Translate one API to and from the canonical request/response.

    `stream_events` yields the whole SSE body; the server sends it only once the call's record is on
    disk, so a client never sees a stream whose record could be lost.
    """

    api: ClassVar[Api]
    keepalive: ClassVar[bytes] = b": keep-alive\n\n"

    @abstractmethod
    def parse(self, body: dict[str, Any], conversations: ConversationStore) -> CanonicalRequest:
        """The canonical request for a harness body; raises `BadRequest` for one it cannot serve."""

    @abstractmethod
    def render(self, request: CanonicalRequest, response: CanonicalResponse) -> dict[str, Any]:
        """The JSON answer in this API's shape."""

    @abstractmethod
    def stream_events(self, request: CanonicalRequest, response: CanonicalResponse) -> Iterator[bytes]:
        """The SSE answer in this API's event sequence."""

    @abstractmethod
    def error_body(self, status: int, message: str, code: str | None = None) -> dict[str, Any]:
        """An error in this API's format."""

    def stream_error(self, status: int, message: str, code: str | None = None) -> bytes:
        """An error event for a stream whose headers (200) are already sent."""
        return sse(None, self.error_body(status, message, code))

    def remember(
        self,
        request: CanonicalRequest,
        response: CanonicalResponse,
        conversations: ConversationStore,
    ) -> None:
        """Keep what a later request may refer to (only the Responses API needs it)."""
        return None


ADAPTERS: Registry[Adapter] = Registry("proxy API")
