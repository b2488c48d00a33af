"""One HTTP request and its answer, as the model-call endpoints see it, whatever serves them.

The proxy's own listener (`_protocol`) hands its model calls an exchange directly: no ASGI messages, the
answer's head and body written in one `transport.write`. Any other ASGI server, and in-process transports
(Starlette's TestClient, httpx's ASGITransport), reach the same endpoint through `AsgiExchange`.
"""

import asyncio
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any, Protocol

from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.types import Receive, Scope, Send

Header = tuple[bytes, bytes]


class Exchange(Protocol):
    """A request (`headers` read by lower-case name) and the means to answer it once."""

    headers: Mapping[str, str]
    path: str
    path_params: Mapping[str, str]
    started: bool  # the answer has begun: an error can no longer be a response of its own

    def stream(self) -> AsyncIterator[bytes]:
        """The request body as it arrives (Starlette's `ClientDisconnect` when the client hangs up)."""
        ...

    def arrived_body(self) -> bytes | None:
        """The whole request body if all of it has already arrived (taken: `stream` then yields nothing
        more), else None."""
        ...

    def on_hangup(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Call `callback` if the client hangs up (once the body is read); returns what stops watching."""
        ...

    async def respond(self, status: int, headers: list[Header], body: bytes) -> None:
        """The whole answer, framed by Content-Length."""
        ...

    async def start_stream(self, headers: list[Header], status: int = 200) -> None:
        """An answer whose body follows in `send_chunk`s (its head may wait for the first chunk)."""
        ...

    async def send_chunk(self, data: bytes, end: bool = False) -> None:
        """Part of a streamed body; `end`: the last."""
        ...


class AsgiExchange:
    """An exchange over ASGI's `scope`, `receive` and `send`."""

    def __init__(self, scope: Scope, receive: Receive, send: Send) -> None:
        self.scope, self.receive, self.send = scope, receive, send
        self.headers = Headers(scope=scope)
        self.path: str = scope["path"]
        self.path_params: Mapping[str, str] = scope.get("path_params", {})
        self.started = False

    def stream(self) -> AsyncIterator[bytes]:
        return Request(self.scope, self.receive).stream()

    def arrived_body(self) -> None:
        return None  # ASGI hands the body over only through `receive`

    def on_hangup(self, callback: Callable[[], None]) -> Callable[[], None]:
        async def watch() -> None:
            while (await self.receive())["type"] != "http.disconnect":
                pass
            callback()

        return asyncio.get_running_loop().create_task(watch()).cancel

    async def respond(self, status: int, headers: list[Header], body: bytes) -> None:
        self.started = True
        length = [(b"content-length", str(len(body)).encode())]
        await self.send({"type": "http.response.start", "status": status, "headers": headers + length})
        await self.send({"type": "http.response.body", "body": body})

    async def start_stream(self, headers: list[Header], status: int = 200) -> None:
        self.started = True
        await self.send({"type": "http.response.start", "status": status, "headers": headers})

    async def send_chunk(self, data: bytes, end: bool = False) -> None:
        message: dict[str, Any] = {"type": "http.response.body", "body": data, "more_body": not end}
        await self.send(message)
