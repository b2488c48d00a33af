"""The Inspect tools over the services: the TOOL_SPECS table and the tool schemas a model sees."""

from __future__ import annotations

import asyncio
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
from forge_eval.benchmarks.services import _toolspec as toolspec


def test_every_service_has_read_and_write_tools() -> None:
    for service in SERVICES.names():
        kinds = {s.kind for s in TOOL_SPECS.values() if s.service == service}
        assert kinds == {"read", "write"}, service


def test_specs_match_the_tool_signatures() -> None:
    tools = {ToolDef(t).name: t for t in tools_for(SERVICES.names())}
    assert set(tools) == set(TOOL_SPECS)
    for name, spec in TOOL_SPECS.items():
        assert name.startswith(f"{spec.service}_") and spec.kind in ("read", "write")
        definition = ToolDef(tools[name])
        assert set(spec.resource_args) <= set(definition.parameters.required), name
        assert spec.result_id is None or spec.kind == "write", name
        assert definition.description and len(definition.description) < 120, name
        for param, schema in definition.parameters.properties.items():
            assert schema.description, f"{name}.{param} has no description"


def test_tools_for_selects_services_only() -> None:
    names = [ToolDef(t).name for t in tools_for(["kb", "contacts"])]
    assert names == [
        "contacts_search",
        "contacts_get",
        "contacts_create",
        "contacts_update",
        "kb_search",
        "kb_get",
        "kb_update",
    ]
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


@pytest.mark.parametrize(
    ("name", "arguments", "request_"),
    [
        ("calendar_list_events", {}, ("GET", "/events", {"params": {"date": "", "query": ""}})),
        (
            "calendar_create_event",
            {"title": "Sync", "date": "2026-03-02", "start": "10:00", "end": "10:30"},
            (
                "POST",
                "/events",
                {
                    "json": {
                        "title": "Sync",
                        "date": "2026-03-02",
                        "start": "10:00",
                        "end": "10:30",
                        "attendees": [],
                        "location": "",
                    }
                },
            ),
        ),
        (
            "calendar_update_event",
            {"event_id": "e1", "end": "11:00"},
            ("PATCH", "/events/e1", {"json": {"end": "11:00"}}),
        ),
        ("calendar_delete_event", {"event_id": "e1"}, ("DELETE", "/events/e1", {"params": {}})),
        (
            "inventory_search",
            {"low_stock": True},
            ("GET", "/products", {"params": {"query": "", "low_stock": "true"}}),
        ),
        (
            "inventory_search",
            {"query": "toner"},
            ("GET", "/products", {"params": {"query": "toner", "low_stock": ""}}),
        ),
        (
            "inventory_order",
            {"sku": "SKU-1", "quantity": 3},
            ("POST", "/orders", {"json": {"sku": "SKU-1", "quantity": 3}}),
        ),
        (
            "mail_search",
            {"query": "rent"},
            ("GET", "/messages", {"params": {"query": "rent", "folder": "inbox"}}),
        ),
        (
            "tickets_create",
            {"title": "Chair"},
            ("POST", "/tickets", {"json": {"title": "Chair", "description": "", "priority": "medium"}}),
        ),
        (
            "tickets_comment",
            {"ticket_id": "T-1", "body": "done"},
            ("POST", "/tickets/T-1/comments", {"json": {"body": "done"}}),
        ),
        (
            "kb_update",
            {"article_id": "a1", "title": "New"},
            ("PATCH", "/articles/a1", {"json": {"title": "New"}}),
        ),
    ],
)
def test_a_tool_call_is_one_request_with_the_declared_defaults(
    name: str,
    arguments: dict[str, object],
    request_: tuple[str, str, dict[str, object]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    sent: list[tuple[str, str, str, dict[str, object]]] = []

    async def record(service: str, method: str, path: str, **body: object) -> dict[str, str]:
        sent.append((service, method, path, body))
        return {"ok": "yes"}

    monkeypatch.setattr(toolspec, "call_service", record)
    assert json.loads(asyncio.run(_tool(name)(**arguments))) == {"ok": "yes"}
    assert sent == [(TOOL_SPECS[name].service, *request_)]


def _tool(name: str) -> Tool:
    return next(t for t in tools_for([TOOL_SPECS[name].service]) if ToolDef(t).name == name)
