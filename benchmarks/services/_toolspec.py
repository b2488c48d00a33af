"""The services' Inspect tools, declared in `tools.yaml`, with the `ToolSpec` of each (how it touches its
service, recorded in a sample's metadata for behavioral analysis).

Every tool is one HTTP call to its service: the path arguments of its route fill the path (and name the
resource the call touches); the other arguments, with the defaults of those the model left out, go as
query parameters of a GET or DELETE, or as the JSON body, where a PATCH leaves out the empty ones (they
stay as they are). One declaration per tool gives the model-facing tool (name, description, typed
arguments) and its `ToolSpec`; `TOOL_SPECS` and `tools_for()` are built from it. A table rather than a
function per tool: the 25 tools differ only in these values.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import yaml
from inspect_ai.tool import Tool, ToolDef, ToolParam, ToolParams, tool

from forge_eval._errors import UnknownNameError
from forge_eval.benchmarks.services._client import call_service
from forge_eval.rundir import ToolSpec

TOOLS_FILE = Path(__file__).with_name("tools.yaml")
#: Argument types of tools.yaml -> JSON schema.
_TYPES: dict[str, dict[str, Any]] = {
    "str": {"type": "string"},
    "int": {"type": "integer"},
    "bool": {"type": "boolean"},
    "list[str]": {"type": "array", "items": {"type": "string"}},
}
_PATH_ARG = re.compile(r"\{(\w+)\}")

#: Every service tool's spec, by tool name.
TOOL_SPECS: dict[str, ToolSpec] = {}
_FACTORIES: dict[str, Callable[[], Tool]] = {}


def _parameters(args: Mapping[str, Mapping[str, Any]]) -> ToolParams:
    properties = {
        name: ToolParam(
            **_TYPES[arg.get("type", "str")], description=arg["description"], default=arg.get("default")
        )
        for name, arg in args.items()
    }
    return ToolParams(properties=properties, required=[n for n, a in args.items() if "default" not in a])


def _request(method: str, path: str, arguments: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The call's path and its `params` (GET, DELETE) or `json` (others) keyword argument."""
    filled = _PATH_ARG.sub(lambda m: str(arguments.pop(m.group(1))), path)
    if method in ("GET", "DELETE"):
        params = {k: ("true" if v else "") if isinstance(v, bool) else v for k, v in arguments.items()}
        return filled, {"params": params}
    if method == "PATCH":
        arguments = {k: v for k, v in arguments.items() if v}
    return filled, {"json": arguments}


def _declare(service: str, name: str, declared: Mapping[str, Any]) -> None:
    method, path = declared["route"].split(" ", 1)
    args: Mapping[str, Mapping[str, Any]] = declared.get("args") or {}
    parameters = _parameters(args)
    defaults = {n: a["default"] for n, a in args.items() if "default" in a}

    async def execute(**arguments: Any) -> str:
        filled, body = _request(method, path, {**defaults, **arguments})
        return dumps(await call_service(service, method, filled, **body))

    def factory() -> Tool:
        described = ToolDef(execute, name=name, description=declared["description"], parameters=parameters)
        return described.as_tool()

    factory.__name__ = name
    _FACTORIES[name] = tool(name=name)(factory)
    resource_args = tuple(_PATH_ARG.findall(path))
    TOOL_SPECS[name] = ToolSpec(name, service, declared["kind"], resource_args, declared.get("result_id"))


def load_tools(path: Path = TOOLS_FILE) -> None:
    """Declare every tool of `path` (tools.yaml), in its order."""
    for service, tools in yaml.safe_load(path.read_text(encoding="utf-8")).items():
        for name, declared in tools.items():
            if not name.startswith(f"{service}_"):
                raise ValueError(f"tool '{name}' must be named '{service}_<verb>'")
            _declare(service, name, declared)


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


load_tools()
