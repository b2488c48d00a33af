"""`ToolSpec`: how a benchmark's service tool touches its service, as a sample's metadata records it.

A benchmark whose tools call stateful services (forgelab's mail, tickets, ...) writes the specs of the
tools it offers into each sample's metadata (`tool_specs_metadata`, under `TOOL_SPECS_KEY`); behavioral
analysis reads them back from the log (`read_tool_specs`), so it never imports the benchmark.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any, Literal

#: The sample-metadata key that holds the specs of the sample's service tools.
TOOL_SPECS_KEY = "tool_specs"


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


def tool_specs_metadata(specs: Iterable[ToolSpec]) -> dict[str, dict[str, Any]]:
    """The specs as JSON-ready sample metadata (the value of `TOOL_SPECS_KEY`), by tool name."""
    return {spec.name: {k: v for k, v in asdict(spec).items() if k != "name"} for spec in specs}


def read_tool_specs(metadata: Mapping[str, Any] | None) -> dict[str, ToolSpec]:
    """The tool specs a sample's metadata records (none when it records none)."""
    recorded: Mapping[str, Mapping[str, Any]] = (metadata or {}).get(TOOL_SPECS_KEY) or {}
    return {
        name: ToolSpec(
            name,
            str(spec["service"]),
            spec["kind"],
            tuple(spec.get("resource_args") or ()),
            spec.get("result_id"),
        )
        for name, spec in recorded.items()
    }
