"""The recording proxy: serves every harness's model calls from an upstream and records each one.

A harness (Codex CLI, Claude Code, OpenClaw, a ReAct loop) points its base URL at
`/r/<rollout>/<attempt>/v1` (or uses a signed rollout API key); each call is translated onto one canonical
chat request, served non-streaming by the upstream (token ids and logprobs included when the upstream
returns them), answered in the harness's own API (JSON or synthesized SSE) and appended to the rollout's
call records (`forge_eval.proxy.records.CallRecord`, `<records>/<rollout>/<attempt>/calls.jsonl`).

Two listeners: the data plane (harnesses, port 8377) and the control plane (trainer: rollouts, rewards,
pause; port 8378 on 127.0.0.1 or a 0600 Unix socket), each with its own credentials. Secrets never go on
the command line (any local process can read it): the admin key comes from FORGE_PROXY_ADMIN_KEY or a
file, and when none is given one is generated into `<records>/.admin-key` (0600).

Quick start::

    forge-eval proxy serve --upstream http://127.0.0.1:8000/v1 --records runs/records
    curl -XPOST localhost:8378/rollouts -H "Authorization: Bearer $(cat runs/records/.admin-key)" \
        -d '{"rollout_id": "r1"}'
    #   -> {"rollout": {...}, "api_key": "fk.r1.0.<hmac>", "base_path": "/r/r1/0"}
    ANTHROPIC_BASE_URL=http://127.0.0.1:8377/r/r1/0 claude -p 'fix the bug'      # or the api_key
    forge-eval proxy compact runs/records                                          # -> Parquet

In Python: `app = create_app(ProxyConfig(...), upstream)` with an `HttpUpstream` or an `InspectUpstream`
(every call an Inspect ModelEvent; serve it with `serve_in_task` from inside the sample), and
`create_control_app(app)` for its control plane: serve both with `serve_in_thread(app, control=...)`, or
reach the control plane without a listener through `HttpProxyControl.in_process(control, admin_key)`.
A restarted proxy resumes the rollouts its records directory holds that were not released. A call is
answered once its record is in the kernel (`durability="page-cache"`: safe from a kill -9 of the proxy)
or, with `durability="fsync"`, once it is on disk (group-committed: safe from a power loss).
"""

from forge_eval.proxy._adapters import ADAPTERS, Adapter, ConversationStore
from forge_eval.proxy._app import API_PATHS, create_app, create_control_app
from forge_eval.proxy._canonical import BadRequest, CanonicalRequest, CanonicalResponse, ToolCall
from forge_eval.proxy._compact import CompactResult, compact
from forge_eval.proxy._config import ProxyConfig
from forge_eval.proxy._control_client import HttpProxyControl, ProxyControl, ProxyRollout
from forge_eval.proxy._http_upstream import HttpUpstream
from forge_eval.proxy._inspect_upstream import InspectUpstream
from forge_eval.proxy._keys import sign_key, verify_key
from forge_eval.proxy._records import iter_attempts, load_calls, read_calls, read_rollout
from forge_eval.proxy._scripted import ScriptedPolicy, ScriptedUpstream
from forge_eval.proxy._server import (
    Listener,
    ServerThread,
    free_port,
    serve_forever,
    serve_in_task,
    serve_in_thread,
)
from forge_eval.proxy._upstream import ProxyUpstream, UpstreamError, UpstreamResult
from forge_eval.proxy._writer import DURABILITY, Durability, RecordWriteError, RecordWriter

__all__ = [
    "ADAPTERS",
    "API_PATHS",
    "Adapter",
    "BadRequest",
    "CompactResult",
    "DURABILITY",
    "Durability",
    "CanonicalRequest",
    "CanonicalResponse",
    "ConversationStore",
    "HttpProxyControl",
    "HttpUpstream",
    "InspectUpstream",
    "Listener",
    "ProxyConfig",
    "ProxyControl",
    "ProxyRollout",
    "ProxyUpstream",
    "RecordWriteError",
    "RecordWriter",
    "ScriptedPolicy",
    "ScriptedUpstream",
    "ServerThread",
    "ToolCall",
    "UpstreamError",
    "UpstreamResult",
    "compact",
    "create_app",
    "create_control_app",
    "free_port",
    "iter_attempts",
    "load_calls",
    "read_calls",
    "read_rollout",
    "serve_forever",
    "serve_in_task",
    "serve_in_thread",
    "sign_key",
    "verify_key",
]
