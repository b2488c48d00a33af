"""Claw-Eval's agent loop ("claw-loop" harness).

The official loop (`runner/loop.py`): every turn is one chat call offering all tools; a reply without
tool calls ends the trial; the loop also stops after `max_turns` turns or `timeout_seconds` of wall
time. There is no submit tool: the last assistant text is the answer. Inspect's `react()` differs
(it needs a submit call and nudges the model to continue), hence this loop. Tool arguments are read
as upstream's FastAPI mock services read them (`lax_arguments`); a call whose arguments are still
refused is reported to the benchmark through the `on_rejected` option (Claw-Eval grades it as the
HTTP 422 its mock would have answered).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from inspect_ai.model import ChatMessageAssistant, ChatMessageSystem, ChatMessageTool, execute_tools
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.tool import Tool, ToolDef

from forge_eval.harnesses._harness import Harness

DEFAULT_MAX_TURNS = 30
DEFAULT_TIMEOUT_S = 600


#: Called with the tool name and arguments of a call whose arguments the tool refused.
OnRejected = Callable[[str, dict[str, Any]], None]


@solver
def claw_loop(
    tools: list[Tool],
    prompt: str,
    max_turns: int | None = None,
    timeout_seconds: int | None = None,
    on_rejected: OnRejected | None = None,
) -> Solver:
    """Run the official-style loop; per-sample `max_turns`/`timeout_seconds` metadata win over defaults."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        turns = state.metadata.get("max_turns") or max_turns or DEFAULT_MAX_TURNS
        timeout = state.metadata.get("timeout_seconds") or timeout_seconds or DEFAULT_TIMEOUT_S
        state.messages.insert(0, ChatMessageSystem(content=prompt))
        state.tools = list(tools)
        deadline = time.monotonic() + timeout
        schemas = {d.name: d.parameters.model_dump(exclude_none=True) for d in map(ToolDef, tools)}
        for _ in range(turns):
            state = await generate(state, tool_calls="none")
            message = state.output.message
            if not message.tool_calls or time.monotonic() >= deadline:
                break
            # max_output=0: tool results reach the model whole, as upstream's loop passes them (Inspect
            # would cut them at 16 KiB; the OCR tasks' documents are longer)
            result = await execute_tools(
                [*state.messages[:-1], _lax(message, schemas)], state.tools, max_output=0
            )
            state.messages.extend(result.messages)
            for reply in result.messages:
                refused = isinstance(reply, ChatMessageTool) and reply.error and reply.error.type == "parsing"
                if refused and on_rejected is not None:
                    call = next(c for c in message.tool_calls if c.id == reply.tool_call_id)
                    on_rejected(call.function, call.arguments)
            if time.monotonic() >= deadline:
                break
        return state

    return solve


def _lax(message: ChatMessageAssistant, schemas: dict[str, dict[str, Any]]) -> ChatMessageAssistant:
    """The message with each call's arguments read as the upstream mocks would (the log keeps the
    model's own message; the tool events show what was executed)."""
    calls = [
        replace(c, arguments=lax_arguments(c.arguments, schemas[c.function])) if c.function in schemas else c
        for c in message.tool_calls or []
    ]
    return message.model_copy(update={"tool_calls": calls})


def lax_arguments(arguments: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    """Arguments as the upstream FastAPI mocks read them: pydantic's lax mode turns "10" into 10 for an
    integer field and ignores unknown keys. Inspect checks arguments strictly against the schema before
    a tool runs, so without this a call the official mock would serve fails before reaching ours."""
    properties: dict[str, Any] = schema.get("properties") or {}
    lax: dict[str, Any] = {}
    for key, value in arguments.items():
        if key not in properties:
            continue
        lax[key] = _coerce(value, properties[key].get("type"))
    return lax


def _coerce(value: Any, kind: str | None) -> Any:
    if not isinstance(value, str):
        return value
    text = value.strip()
    try:
        if kind == "integer" and text.lstrip("-").isdigit():
            return int(text)
        if kind == "number":
            return float(text)
    except ValueError:
        return value
    if kind == "boolean" and text.lower() in ("true", "false"):
        return text.lower() == "true"
    return value


class ClawLoopHarness(Harness):
    name = "claw-loop"
    description = "Claw-Eval's own loop: all tools every turn, stops at a reply without tool calls"

    def agent(self, *, tools: list[Tool], system_prompt: str, **options: Any) -> Solver:
        return claw_loop(tools, system_prompt, **options)
