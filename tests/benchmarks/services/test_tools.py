"""The Inspect tools over the services: the TOOL_SPECS table and the tool schemas a model sees."""

from __future__ import annotations

import asyncio
import inspect as pyinspect
import json

import pytest
from inspect_ai.tool import Tool, ToolDef, ToolError
from inspect_ai.util import Store
from inspect_ai.util._store import init_subtask_store

from forge_eval._errors import UnknownNameError
from forge_eval.benchmarks.services import (
    SERVICES,
    TOOL_SPECS,
    ServiceCluster,
    WorldClient,
    bind_world,
    tools_for,
)


def test_every_service_has_read_and_write_tools() -> None:
    for service in SERVICES.names():
        kinds = {s.kind for s in TOOL_SPECS.values() if s.service == service}
        assert kinds == {"read", "write"}, service


def test_specs_match_the_tool_signatures() -> None:
    tools = {ToolDef(t).name: t for t in tools_for(SERVICES.names())}
    assert set(tools) == set(TOOL_SPECS)
    for name, spec in TOOL_SPECS.items():
        assert name.startswith(f"{spec.service}_") and spec.kind in ("read", "write")
        params = pyinspect.signature(tools[name]).parameters
        assert set(spec.resource_args) <= set(params), name
        assert spec.result_id is None or spec.kind == "write", name
        definition = ToolDef(tools[name])
        assert definition.description and len(definition.description) < 120, name
        for param, schema in definition.parameters.properties.items():
            assert schema.description, f"{name}.{param} has no description"


def test_tools_for_selects_services_only() -> None:
    names = [ToolDef(t).name for t in tools_for(["kb", "contacts"])]
    assert names == ["contacts_search", "contacts_get", "contacts_create", "contacts_update",
                     "kb_search", "kb_get", "kb_update"]
    with pytest.raises(UnknownNameError, match="unknown service 'crm'"):
        tools_for(["crm"])


def test_tools_reach_the_bound_world_and_raise_tool_errors() -> None:
    async def scenario(cluster: ServiceCluster) -> None:
        init_subtask_store(Store())  # what Inspect does per sample
        with pytest.raises(ToolError, match="no service world is set up"):
            await tools_for(["tickets"])[0]()
        client = WorldClient(cluster.urls, "tool-world")
        await client.reset("tickets", {"tickets": [{"id": "T-1", "title": "Chair"}]}, [{"endpoint": "get"}])
        bind_world("tool-world", cluster.urls)
        get, update = (_tool("tickets_get"), _tool("tickets_update"))
        with pytest.raises(ToolError, match="tickets error 503: service temporarily unavailable"):
            await get(ticket_id="T-1")
        assert json.loads(await get(ticket_id="t-1"))["title"] == "Chair"
        with pytest.raises(ToolError, match="tickets error 404: no ticket with id 'T-9'"):
            await get(ticket_id="T-9")
        with pytest.raises(ToolError, match="tickets error 422: invalid request: priority"):
            await update(ticket_id="T-1", priority="sky-high")
        assert json.loads(await update(ticket_id="T-1", priority="High"))["priority"] == "high"
        assert (await client.state("tickets"))["calls"] == {"get": 3, "update": 2}

    with ServiceCluster(["tickets"]) as cluster:
        asyncio.run(scenario(cluster))


def _tool(name: str) -> Tool:
    return next(t for t in tools_for([TOOL_SPECS[name].service]) if ToolDef(t).name == name)
