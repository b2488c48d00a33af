"""The worlds of the benchmarks whose tools call local HTTP services (forgelab, Claw-Eval): each sample
gets its own world on the shared services, and the world is dropped once the sample is scored."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from uuid import uuid4

import anyio
from inspect_ai.solver import TaskState

from forge_eval._registry import Registry
from forge_eval.benchmarks.services import Service, ServiceCluster, WorldClient, bind_world, bound_world

#: A service's initial state and its fault plan.
Initial = tuple[Mapping[str, Any], list[dict[str, Any]]]


async def create_world(
    stem: str, initial: Mapping[str, Initial], catalog: Registry[Service] | None = None
) -> WorldClient:
    """A fresh world named `stem`-<random> in each service of `initial` (started once per process), in
    that service's initial state with its fault plan."""
    cluster = await anyio.to_thread.run_sync(ServiceCluster.shared, catalog)
    client = WorldClient({s: cluster.url(s) for s in initial}, f"{stem}-{uuid4().hex[:8]}")
    for service, (records, faults) in initial.items():
        await client.reset(service, records, faults)
    return client


async def open_world(
    state: TaskState, initial: Mapping[str, Initial], catalog: Registry[Service] | None = None
) -> None:
    """This sample's world, bound in the sample store for the tools."""
    client = await create_world(f"{state.sample_id}-e{state.epoch}", initial, catalog)
    bind_world(client.world, client.urls)


async def drop_world(state: TaskState) -> None:
    """Free the sample's world once it has been scored (a task's `cleanup`)."""
    bound = bound_world()
    if bound is not None:
        await WorldClient(bound[1], bound[0]).drop()
