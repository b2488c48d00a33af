"""The proxy's settings (the `forge-eval proxy serve` options map onto these one to one)."""

import fnmatch
import secrets
from dataclasses import dataclass, field
from pathlib import Path

from forge_eval.proxy._writer import Durability


@dataclass
class ProxyConfig:
    """Settings of one proxy.

    Args:
        records_dir: Where the call and rollout records go.
        durability: When a call is answered: once its record is in the kernel's page cache (survives a
            kill -9 of the proxy, not a power loss) or on disk (`fsync`, group-committed); see `DURABILITY`.
        secret: Signs rollout API keys (HMAC); keep it from the harnesses.
        admin_key: Bearer token of the control plane (a separate listener); a random one when None.
            It must differ from `secret`: whoever holds the admin key can post rewards.
        upstreams: OpenAI-compatible base URLs (ignored when an upstream object is given to the app).
        served_model: Model name sent upstream; None asks the upstream's `/v1/models`.
        model_aliases: Glob patterns of model names harnesses may ask for; None accepts any name
            (harnesses use several aliases, e.g. Claude Code's small model), all served by the policy.
        max_body_bytes: Largest request body accepted (after decompression).
        body_timeout_s: A request body must arrive whole within this long (else 408 and the connection
            is closed), so that a client stalled mid-body does not hold a connection for ever.
        keepalive_s: A stream whose upstream has not answered after this long gets its 200 headers and
            a keep-alive event every `keepalive_s` until it does.
        pause_retry_after_s: `Retry-After` of the 429 answered while paused.
        upstream_retries, upstream_timeout_s, upstream_backoff_s, token_ids, upstream_api_key: see
            `HttpUpstream`.
    """

    records_dir: Path
    secret: str
    durability: Durability = "page-cache"
    admin_key: str | None = None
    upstreams: list[str] = field(default_factory=list)
    served_model: str | None = None
    model_aliases: list[str] | None = None
    max_body_bytes: int = 32 * 1024 * 1024
    body_timeout_s: float = 60.0
    keepalive_s: float = 5.0
    pause_retry_after_s: int = 5
    upstream_retries: int = 4
    upstream_timeout_s: float = 600.0
    upstream_backoff_s: float = 0.25
    token_ids: bool = True
    upstream_api_key: str | None = None

    def __post_init__(self) -> None:
        if not self.secret:
            raise ValueError("the proxy needs a non-empty secret to sign rollout API keys")
        if self.admin_key is None:
            self.admin_key = secrets.token_urlsafe(32)
        if self.admin_key == self.secret:
            raise ValueError(
                "the admin key must differ from the secret: the control plane (rewards) needs its own token"
            )

    def model_allowed(self, alias: str) -> bool:
        if self.model_aliases is None:
            return True
        return any(fnmatch.fnmatchcase(alias, pattern) for pattern in self.model_aliases)
