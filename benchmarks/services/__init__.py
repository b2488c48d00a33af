"""Local stateful services (mail, calendar, tickets, kb, contacts, inventory) and their Inspect tools.

Each service is a real HTTP server on 127.0.0.1 with per-sample worlds and fault injection;
`ServiceCluster` runs them, `WorldClient` resets and inspects a world, and `tools_for()` gives the
Inspect tools of chosen services, declared in tools.yaml and described in `TOOL_SPECS`.
"""

from forge_eval.benchmarks.services._app import DEFAULT_WORLD, WORLD_HEADER, Call, Endpoint, Service
from forge_eval.benchmarks.services._client import ServiceError, WorldClient, bind_world, bound_world
from forge_eval.benchmarks.services._cluster import ServiceCluster, ServiceStartError
from forge_eval.benchmarks.services._faults import Fault
from forge_eval.benchmarks.services._servers import SERVICES
from forge_eval.benchmarks.services._toolspec import TOOL_SPECS, ToolSpec, tools_for

__all__ = [
    "DEFAULT_WORLD",
    "SERVICES",
    "Call",
    "Endpoint",
    "TOOL_SPECS",
    "WORLD_HEADER",
    "Fault",
    "Service",
    "ServiceCluster",
    "ServiceError",
    "ServiceStartError",
    "ToolSpec",
    "WorldClient",
    "bind_world",
    "bound_world",
    "tools_for",
]
