"""The record schema shared by the proxy (writer) and the training core (reader).

One `CallRecord` per model call the proxy delivered, one `RolloutRecord` per rollout, with the fields a
trainer needs (token ids, logprobs, sampling, timing). Both sides import this module, so the schema
lives in one place.
Records are stored append-only as JSONL (one `model_dump_json()` per line).
"""

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

SCHEMA_VERSION = 1

Api = Literal["chat", "completions", "responses", "anthropic_messages"]
ErrorKind = Literal["none", "transport", "timeout", "http_5xx", "http_4xx", "context_length"]
Termination = Literal[
    "running", "completed", "timeout", "harness_crash", "oom", "evicted", "proxy_terminal_error", "aborted"
]
RoleTag = Literal["action", "answer", "subagent", "compaction", "title", "aux", "planner"]

#: `served_request`'s tool messages carry `is_error: true` where the harness marked its tool's failure
#: (Anthropic's `tool_result.is_error`); the Inspect upstream copies it into the message's metadata.
TOOL_ERROR_KEY = "is_error"


class UpstreamFailure(BaseModel):
    """One failed attempt at the upstream (a retried or terminal error)."""

    kind: ErrorKind
    http_status: int | None = None
    message: str = ""
    endpoint: str | None = None
    at: float = Field(description="unix time of the failure")
    call_seq: int | None = Field(default=None, description="the rollout's call count at the time")


class CallRecord(BaseModel):
    """One model call that the proxy delivered to a harness (or whose client disconnected)."""

    model_config = ConfigDict(extra="allow")

    schema_version: int = SCHEMA_VERSION
    # identity
    call_id: str
    rollout_id: str
    attempt_id: int = 0
    group_uid: str | None = None
    seq: int = Field(description="monotonic per rollout, assigned by the proxy")
    request_hash: str | None = None
    retry_of: str | None = None
    # protocol
    api: Api
    path: str
    stream: bool = False
    user_agent: str | None = None
    harness: str | None = None
    model_alias: str | None = Field(default=None, description="the model name the harness asked for")
    # request / response
    original_request: dict[str, Any]
    served_request: dict[str, Any] = Field(description="the canonical chat body sent upstream")
    returned_response: dict[str, Any] | None = Field(default=None, description="protocol-shaped body")
    upstream_response: dict[str, Any] | None = None
    finish_reason: str | None = None
    usage: dict[str, Any] | None = None
    # tokens (present when the upstream returns them, e.g. vLLM return_token_ids)
    prompt_token_ids: list[int] | None = None
    completion_token_ids: list[int] | None = None
    completion_logprobs: list[float] | None = None
    policy_version: int | None = None
    # upstream
    endpoint: str | None = None
    http_status: int | None = None
    retry_count: int = 0
    error_kind: ErrorKind = "none"
    upstream_failures: list[UpstreamFailure] = Field(default_factory=list)
    client_disconnected: bool = False
    # timing (unix seconds)
    t_received: float
    t_upstream_start: float | None = None
    t_upstream_end: float | None = None
    t_delivered: float | None = None


class RolloutRecord(BaseModel):
    """One rollout: its placement, its outcome and what the trainer should do with it."""

    model_config = ConfigDict(extra="allow")

    schema_version: int = SCHEMA_VERSION
    rollout_id: str
    attempt: int = 0
    group_uid: str | None = None
    task_id: str | None = None
    seed: int | None = Field(default=None, description="run seed of an evaluation (forge-eval run)")
    epoch: int | None = Field(default=None, description="epoch (1-based) of an evaluation sample")
    harness: str | None = None
    mode: Literal["train", "eval"] = "train"
    sampling: dict[str, Any] = Field(default_factory=dict, description="pinned sampling parameters")
    deadline_s: float | None = None
    pod: str | None = None
    node: str | None = None
    t_start: float | None = None
    t_end: float | None = None
    # outcome
    exit_code: int | None = None
    termination: Termination = "running"
    reward: float | None = None
    verifier_output: dict[str, Any] | None = None
    answer: str | None = None
    n_calls: int = 0
    policy_versions: list[int] = Field(default_factory=list)
    # failures and disposition
    upstream_failures: dict[str, int] = Field(default_factory=dict)
    upstream_failures_last_at: float | None = None
    discard: bool = False
    discard_reason: str | None = None
