"""The upstream interface: where the proxy gets a model's answer (an HTTP inference server, Inspect)."""

from dataclasses import dataclass, field
from typing import Any, Protocol

from forge_eval.proxy._canonical import CanonicalRequest, CanonicalResponse
from forge_eval.proxy.records import ErrorKind, UpstreamFailure

_CONTEXT_WORDS = ("context length", "context_length", "maximum context", "too many tokens", "exceeds the")


def http_error_kind(status: int, message: str) -> ErrorKind:
    """How an upstream's HTTP error is recorded: a 4xx that says the prompt is too long is
    `context_length` (the harness gets the 4xx and can compact; retrying cannot help)."""
    if status >= 500:
        return "http_5xx"
    return "context_length" if any(w in message.lower() for w in _CONTEXT_WORDS) else "http_4xx"


class UpstreamError(Exception):
    """The upstream could not answer (after retries): `kind` and `http_status` go into the records."""

    def __init__(
        self,
        kind: ErrorKind,
        message: str,
        http_status: int | None = None,
        failures: list[UpstreamFailure] | None = None,
        served_request: dict[str, Any] | None = None,
        endpoint: str | None = None,
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.http_status = http_status
        self.failures = failures or []
        self.served_request = served_request
        self.endpoint = endpoint

    @property
    def client_status(self) -> int:
        """The status the harness gets: the upstream's own 4xx, 504 for a timeout, 502 otherwise."""
        if self.kind in ("http_4xx", "context_length") and self.http_status:
            return self.http_status
        return 504 if self.kind == "timeout" else 502


@dataclass
class UpstreamResult:
    """One answered call: the response plus how it was obtained (for the call record)."""

    response: CanonicalResponse
    served_request: dict[str, Any]
    raw: dict[str, Any] | None = None
    endpoint: str | None = None
    http_status: int | None = 200
    failures: list[UpstreamFailure] = field(default_factory=list)
    t_start: float | None = None
    t_end: float | None = None


class ProxyUpstream(Protocol):
    """What serves the proxy's calls. `route_key` keeps one rollout on one endpoint (prefix caching)."""

    async def complete(
        self, request: CanonicalRequest, sampling: dict[str, Any], *, route_key: str, call_seq: int
    ) -> UpstreamResult:
        """Answer one canonical request with the rollout's pinned `sampling`; raise `UpstreamError`."""
        ...

    async def count_tokens(self, request: CanonicalRequest) -> int:
        """The prompt's length in the served model's tokens."""
        ...

    async def aclose(self) -> None:
        """Release connections."""
        ...
