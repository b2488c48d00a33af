"""What a call record tells the role tagger: model alias, tools offered, system prompt, tool calls made.

Records carry three request shapes (the canonical chat body the proxy served, plus the harness's original
Anthropic / Responses / chat body) and two response shapes; this module reads whichever is present so the
tagging rules can stay declarative.
"""

import functools
import hashlib
import re
from dataclasses import dataclass
from typing import Any

from forge_eval.proxy.records import CallRecord

# Claude Code prefixes its system prompt with a per-request billing line; it must not split fingerprints.
_VOLATILE_LINE = re.compile(r"^x-anthropic-billing-header:.*$", re.MULTILINE)
_DIGITS = re.compile(r"\d+")
# OpenClaw puts its session key only into the user text ("Runtime: agent=main | session=agent:main:...").
_OPENCLAW_SESSION = re.compile(r"session=(agent:[^\s|]+)")


@dataclass(frozen=True, slots=True)
class CallSignals:
    """The tagging-relevant facts of one call, independent of the API it came through."""

    alias: str | None
    path: str
    tools_offered: frozenset[str]
    system_text: str
    system_fingerprint: str
    last_user_text: str
    tool_calls: tuple[str, ...]
    output_schema_keys: frozenset[str]
    thread_key: str | None


def _text(content: Any) -> str:
    """Flatten chat / Anthropic / Responses content (a string or a list of parts) to text."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, dict):
        return str(content.get("text") or content.get("content") or "")
    if isinstance(content, list):
        return "\n".join(_text(part) for part in content)
    return str(content)


def _messages(request: dict[str, Any]) -> list[dict[str, Any]]:
    messages = request.get("messages")
    if isinstance(messages, list):
        return [m for m in messages if isinstance(m, dict)]
    items = request.get("input")
    if isinstance(items, list):
        return [m for m in items if isinstance(m, dict) and "role" in m]
    if isinstance(items, str):
        return [{"role": "user", "content": items}]
    return []


def _system_text(record: CallRecord) -> str:
    """The leading system/developer text, which identifies the agent (main agent vs subagent)."""
    original = record.original_request
    if "system" in original:
        return _text(original["system"])
    if original.get("instructions"):
        return _text(original["instructions"])
    for request in (record.served_request, original):
        lead = []
        for message in _messages(request):
            if message.get("role") not in ("system", "developer"):
                break
            lead.append(_text(message.get("content")))
        if lead:
            return "\n".join(lead)
    return ""


def _tool_name(tool: dict[str, Any]) -> str | None:
    function = tool.get("function")
    if isinstance(function, dict) and function.get("name"):
        return str(function["name"])
    name = tool.get("name")
    return str(name) if name else None


def _tools_offered(record: CallRecord) -> frozenset[str]:
    for request in (record.served_request, record.original_request):
        tools = request.get("tools")
        if isinstance(tools, list) and tools:
            return frozenset(n for t in tools if isinstance(t, dict) and (n := _tool_name(t)))
    return frozenset()


def _last_user_text(record: CallRecord) -> str:
    for request in (record.served_request, record.original_request):
        users = [m for m in _messages(request) if m.get("role") == "user"]
        if users:
            return _text(users[-1].get("content"))
    return ""


def _tool_calls(record: CallRecord) -> tuple[str, ...]:
    """Names of the tools the response calls (vLLM chat JSON first, then the protocol-shaped body)."""
    upstream = record.upstream_response or {}
    choices = upstream.get("choices")
    if isinstance(choices, list) and choices:
        message = choices[0].get("message") or {}
        calls = message.get("tool_calls") or []
        return tuple(str((c.get("function") or {}).get("name", "")) for c in calls)
    returned = record.returned_response or {}
    blocks = returned.get("content") if isinstance(returned.get("content"), list) else returned.get("output")
    if isinstance(blocks, list):
        kinds = ("tool_use", "function_call", "custom_tool_call")
        return tuple(str(b.get("name", "")) for b in blocks if isinstance(b, dict) and b.get("type") in kinds)
    return ()


def _output_schema_keys(record: CallRecord) -> frozenset[str]:
    """Properties of a requested structured output (Claude Code's title call asks for `{title}`)."""
    original = record.original_request
    candidates = [
        (original.get("output_config") or {}).get("format"),
        (original.get("text") or {}).get("format"),
        original.get("response_format"),
        record.served_request.get("response_format"),
    ]
    for fmt in candidates:
        if not isinstance(fmt, dict):
            continue
        schema = fmt.get("schema") or (fmt.get("json_schema") or {}).get("schema") or {}
        properties = schema.get("properties") if isinstance(schema, dict) else None
        if isinstance(properties, dict):
            return frozenset(properties)
    return frozenset()


def _thread_key(record: CallRecord) -> str | None:
    """A harness conversation id found in the body: Codex's `prompt_cache_key`, OpenClaw's session key."""
    key = record.original_request.get("prompt_cache_key")
    if key:
        return str(key)
    for request in (record.served_request, record.original_request):
        for message in _messages(request):
            if message.get("role") != "user":
                continue
            if m := _OPENCLAW_SESSION.search(_text(message.get("content"))):
                return m.group(1)
    return None


@functools.lru_cache(maxsize=1024)  # every call of a rollout repeats its system prompt
def fingerprint(system_text: str) -> str:
    """A short hash of the system prompt with volatile parts (billing header, numbers) removed."""
    stable = _DIGITS.sub("0", _VOLATILE_LINE.sub("", system_text)).strip()
    return hashlib.blake2b(stable.encode(), digest_size=8).hexdigest()


def call_signals(record: CallRecord) -> CallSignals:
    """Read the tagging signals of one record."""
    system = _system_text(record)
    last_user = _last_user_text(record)
    return CallSignals(
        alias=record.model_alias or record.original_request.get("model"),
        path=record.path,
        tools_offered=_tools_offered(record),
        system_text=system,
        system_fingerprint=fingerprint(system),
        last_user_text=last_user,
        tool_calls=_tool_calls(record),
        output_schema_keys=_output_schema_keys(record),
        thread_key=_thread_key(record),
    )
