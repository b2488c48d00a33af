"""A task's HTTP tools, built from its task.yaml `tools` + `tool_endpoints`, against our mocks.

Each tool keeps the task's own name, description and JSON schema (what the official loop offers the
model) and POSTs its arguments to the same path on our service. Every call is recorded with its HTTP
status in the sample store: robustness and the tool checks are graded from these dispatches.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
from inspect_ai.tool import Tool, ToolDef, ToolError, ToolParams
from inspect_ai.util import store

from forge_eval.benchmarks.claweval._data import ClawTask
from forge_eval.benchmarks.claweval._scoring import Dispatch
from forge_eval.benchmarks.claweval._services import service_for
from forge_eval.benchmarks.services import WORLD_HEADER, bound_world

_STORE_DISPATCHES = "claweval:dispatches"
TIMEOUT_S = 30.0


def dispatches() -> list[Dispatch]:
    """The current sample's tool calls so far."""
    return [Dispatch(**d) for d in store().get(_STORE_DISPATCHES, [])]


def record_rejected(tool: str, arguments: dict[str, Any]) -> None:
    """A call whose arguments the service would refuse (FastAPI answers 422): an error dispatch."""
    _record(tool, 422, arguments)


def _record(tool: str, status: int, arguments: dict[str, Any]) -> None:
    calls = store().get(_STORE_DISPATCHES, [])
    calls.append({"tool": tool, "status": status, "arguments": arguments})
    store().set(_STORE_DISPATCHES, calls)


async def _post(tool: str, service: str, path: str, arguments: dict[str, Any]) -> str:
    bound = bound_world()
    if bound is None:
        raise ToolError(f"{tool}: no service world is set up for this sample")
    world, urls = bound
    try:
        async with httpx.AsyncClient(timeout=TIMEOUT_S) as client:
            response = await client.post(urls[service] + path, json=arguments, headers={WORLD_HEADER: world})
    except httpx.HTTPError as e:
        _record(tool, 599, arguments)
        raise ToolError(f"{service} service unreachable: {e}") from None
    _record(tool, response.status_code, arguments)
    if response.status_code >= 400:
        raise ToolError(f"HTTP {response.status_code}: {response.text[:500]}")
    return json.dumps(response.json(), ensure_ascii=False)


def _tool(name: str, description: str, schema: dict[str, Any], service: str, path: str) -> Tool:
    async def execute(**arguments: Any) -> str:
        return await _post(name, service, path, arguments)

    params = ToolParams.model_validate({"type": "object", "properties": {}, **schema})
    return ToolDef(execute, name=name, description=description or name, parameters=params).as_tool()


def task_tools(task: ClawTask) -> list[Tool]:
    """The task's tools, in task.yaml order, each bound to the service that serves its path."""
    endpoints = {e.tool_name: e for e in task.tool_endpoints}
    tools = []
    for spec in task.tools:
        endpoint = endpoints[spec.name]
        service = service_for(endpoint.path)
        assert service is not None, f"{spec.name}: no service for {endpoint.path} (the task is skipped)"
        tools.append(_tool(spec.name, spec.description, spec.input_schema, service, endpoint.path))
    return tools
