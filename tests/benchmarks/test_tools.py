"""The Inspect tools over the services: the TOOL_SPECS table and the tool schemas a model sees."""

from __future__ import annotations

import inspect as pyinspect

import pytest
from inspect_ai.tool import ToolDef

from forge_eval._errors import UnknownNameError
from forge_eval.benchmarks.services import SERVICES, TOOL_SPECS, tools_for


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
