"""`ToolSpec`: what each service tool does, in a table that behavioral analysis can read.

Tools register themselves with `service_tool`, which applies Inspect's `@tool` and records the
spec; `TOOL_SPECS` and `tools_for()` are built from that one registration.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Literal

from inspect_ai.tool import Tool, tool

from forge_eval._errors import UnknownNameError


@dataclass(frozen=True)
class ToolSpec:
    """How a tool touches its service.

    Attributes:
        name: The tool name the model sees (`<service>_<verb>`).
        service: The service it calls.
        kind: "read" (no state change) or "write".
        resource_args: Argument names that identify the existing resource the call touches
            (e.g. `message_id`); empty for searches and for creations.
        result_id: Dotted key of the created resource's id in the JSON result (creations only),
            so a later read of that id can be recognised as a read-back.
    """

    name: str
    service: str
    kind: Literal["read", "write"]
    resource_args: tuple[str, ...] = ()
    result_id: str | None = None


#: Every service tool's spec, by tool name.
TOOL_SPECS: dict[str, ToolSpec] = {}
_FACTORIES: dict[str, Callable[[], Tool]] = {}


def service_tool(
    service: str,
    kind: Literal["read", "write"],
    resource_args: tuple[str, ...] = (),
    result_id: str | None = None,
) -> Callable[[Callable[[], Tool]], Callable[[], Tool]]:
    """Register a tool factory (named `<service>_<verb>`) as an Inspect tool with its spec."""

    def decorate(factory: Callable[[], Tool]) -> Callable[[], Tool]:
        name = factory.__name__
        if not name.startswith(f"{service}_"):
            raise ValueError(f"tool '{name}' must be named '{service}_<verb>'")
        registered = tool(name=name)(factory)
        TOOL_SPECS[name] = ToolSpec(name, service, kind, tuple(resource_args), result_id)
        _FACTORIES[name] = registered
        return registered

    return decorate


def tools_for(services: Iterable[str]) -> list[Tool]:
    """Fresh tool instances for exactly these services (prompts stay short), in table order."""
    wanted = list(services)
    known = {spec.service for spec in TOOL_SPECS.values()}
    for service in wanted:
        if service not in known:
            raise UnknownNameError("service", service, sorted(known))
    return [_FACTORIES[name]() for name, spec in TOOL_SPECS.items() if spec.service in wanted]


def dumps(result: Any) -> str:
    """Tool results as JSON text: what the model reads."""
    return json.dumps(result, ensure_ascii=False)
