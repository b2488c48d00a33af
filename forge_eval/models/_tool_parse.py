"""Recover tool calls that small models write as text.

Qwen2.5-Coder-0.5B picks the right tool but writes the call as plain JSON, often in a ```json fence,
never in the `<tool_call>` tags its chat template asks for, so llama.cpp returns it as text.
llama.cpp's own parsers only accept the template's exact format, hence this lenient one.

How it works: every `{` or `[` in the text is a possible start of a JSON value; the JSON decoder
reads the longest value from there (so strings that contain braces, fences or tags cannot confuse
it). A value is a call when it is `{"name": <declared tool>, "arguments"|"parameters": {...}}`
(optionally wrapped as `{"function": {...}}`) or a list of those. Fences and `<tool_call>` tags
are then just text around the call, removed from the remaining content.

One repair: the model often copies the tool's JSON-Schema keywords ("type", "required",
"properties", "additionalProperties") into its arguments next to the right values, and Inspect then
rejects the whole call. Given the declared parameter names, such keywords are dropped when they are
not parameters of the tool; the call records what was dropped (`ParsedToolCall.dropped`) so that
format robustness can still count it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

ToolParseStatus = Literal["parsed", "failed", "none"]
# How the first valid call was wrapped: in the chat template's <tool_call> tags, in a ``` fence, or not.
ToolCallFormat = Literal["tagged", "fenced", "bare"]

_DECODER = json.JSONDecoder()
_SCHEMA_KEYWORDS = frozenset({"type", "required", "properties", "additionalProperties", "$schema"})
_ARG_KEYS = ("arguments", "parameters")
# Text that looks like an attempted call even when no JSON value could be read from it.
_ATTEMPT = re.compile(r"<tool_call>|\"name\"\s*:\s*\"[^\"]*\"[\s\S]*\"(?:arguments|parameters)\"\s*:")
_EMPTY_WRAPPERS = re.compile(r"```[A-Za-z_]*\s*```|<tool_call>\s*(?:</tool_call>)?|</tool_call>")
_FENCE_OPEN = re.compile(r"```[A-Za-z_]*\s*$")


@dataclass(frozen=True)
class ParsedToolCall:
    """One call recovered from text: a declared tool name and its arguments object."""

    name: str
    arguments: dict[str, Any]
    dropped: tuple[str, ...] = ()


@dataclass(frozen=True)
class ToolParse:
    """The outcome of parsing one model message.

    Attributes:
        status: "parsed" (at least one valid call), "failed" (the text attempts a call but none is
            valid), or "none" (no attempt).
        calls: The valid calls, in order.
        content: The text left once the valid calls (and their fences/tags) are removed; rejected
            calls stay in it as written.
        errors: Why each attempted call was rejected.
        format: How the first valid call was wrapped (None without one).
    """

    status: ToolParseStatus
    calls: list[ParsedToolCall] = field(default_factory=list)
    content: str = ""
    errors: list[str] = field(default_factory=list)
    format: ToolCallFormat | None = None

    @property
    def repaired(self) -> int:
        """How many valid calls needed schema keywords dropped from their arguments."""
        return sum(1 for call in self.calls if call.dropped)


class _Rejected(Exception):
    """A JSON value shaped like a call that is not a valid one (the message says why)."""


def _as_call(
    value: Any, tool_names: Collection[str], params: Mapping[str, Collection[str]]
) -> ParsedToolCall | None:
    """The call `value` encodes, None if it is not call-shaped; raises _Rejected if it is invalid."""
    if not isinstance(value, dict):
        return None
    if isinstance(value.get("function"), dict) and "name" not in value:
        value = value["function"]
    name = value.get("name")
    arg_key = next((k for k in _ARG_KEYS if k in value), None)
    if not isinstance(name, str) or (arg_key is None and name not in tool_names):
        return None
    if name not in tool_names:
        raise _Rejected(f"call names undeclared tool {name!r}")
    arguments = value.get(arg_key, {}) if arg_key else {}
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except ValueError:
            raise _Rejected(f"arguments of {name!r} are a string that is not JSON") from None
    if not isinstance(arguments, dict):
        raise _Rejected(f"arguments of {name!r} are {type(arguments).__name__}, not an object")
    declared = params.get(name)
    if declared is None:
        return ParsedToolCall(name=name, arguments=arguments)
    dropped = tuple(k for k in arguments if k in _SCHEMA_KEYWORDS and k not in declared)
    kept = {k: v for k, v in arguments.items() if k not in dropped}
    return ParsedToolCall(name=name, arguments=kept, dropped=dropped)


def _as_calls(
    value: Any, tool_names: Collection[str], params: Mapping[str, Collection[str]]
) -> list[ParsedToolCall] | None:
    if isinstance(value, list):
        if not value or not all(isinstance(v, dict) for v in value):
            return None
        calls = [_as_call(v, tool_names, params) for v in value]
        return None if any(c is None for c in calls) else [c for c in calls if c is not None]
    call = _as_call(value, tool_names, params)
    return None if call is None else [call]


def _cut(text: str, spans: list[tuple[int, int]]) -> str:
    for start, end in reversed(spans):
        text = text[:start] + text[end:]
    return text


def _format_at(text: str, start: int) -> ToolCallFormat:
    before = text[:start].rstrip()
    if before.endswith("<tool_call>"):
        return "tagged"
    return "fenced" if _FENCE_OPEN.search(before) else "bare"


def parse_tool_calls(
    text: str, tool_names: Collection[str], params: Mapping[str, Collection[str]] | None = None
) -> ToolParse:
    """Find the calls of declared tools in a model's text.

    Args:
        text: The assistant message content.
        tool_names: Names of the tools the request declared; calls of other names are rejected.
        params: Declared parameter names per tool; with them, schema keywords that are not
            parameters are dropped from a call's arguments (see the module docstring).

    Returns:
        The calls found, the remaining content, and whether the text attempted a call and failed.
    """
    calls: list[ParsedToolCall] = []
    errors: list[str] = []
    spans: list[tuple[int, int]] = []
    rejected: list[tuple[int, int]] = []
    pos = 0
    while True:
        starts = [i for i in (text.find("{", pos), text.find("[", pos)) if i >= 0]
        if not starts:
            break
        start = min(starts)
        try:
            value, end = _DECODER.raw_decode(text, start)
        except ValueError:
            pos = start + 1
            continue
        try:
            found = _as_calls(value, tool_names, params or {})
        except _Rejected as e:
            errors.append(str(e))
            rejected.append((start, end))
            pos = end
            continue
        if found is None:
            pos = start + 1
            continue
        calls.extend(found)
        spans.append((start, end))
        pos = end
    # What is left once every call-shaped value is cut out: an attempt there is malformed or truncated.
    if _ATTEMPT.search(_EMPTY_WRAPPERS.sub("", _cut(text, sorted(spans + rejected)))):
        errors.append("text attempts a tool call that is not valid JSON (malformed or cut off)")
    content = _EMPTY_WRAPPERS.sub("", _cut(text, spans)) if spans else text
    status: ToolParseStatus = "parsed" if calls else ("failed" if errors else "none")
    call_format = _format_at(text, spans[0][0]) if spans else None
    return ToolParse(status=status, calls=calls, content=content.strip(), errors=errors, format=call_format)
