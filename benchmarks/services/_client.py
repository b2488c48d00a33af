"""Talking to the services: the admin side (reset, state, drop a world) and tool calls.

`WorldClient` is what a task's setup and its verifier use; `call_service` is what the Inspect
tools use, finding the sample's world through the sample store (`bind_world`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import httpx
from inspect_ai.tool import ToolError
from inspect_ai.util import store

from forge_eval._errors import ForgeError
from forge_eval.benchmarks.services._app import WORLD_HEADER

_STORE_WORLD = "services:world"
_STORE_URLS = "services:urls"
TIMEOUT_S = 30.0


class ServiceError(ForgeError):
    """A service answered an admin request (reset/state) with an error, or could not be reached."""


class WorldClient:
    """Admin access to one world across the services: create/reset it, read its state, drop it.

    Args:
        urls: Base URL per service name (`ServiceCluster.urls`).
        world: The world id (one per sample).
    """

    def __init__(self, urls: Mapping[str, str], world: str) -> None:
        self.urls = dict(urls)
        self.world = world

    async def reset(
        self, service: str, state: Mapping[str, Any], faults: list[dict[str, Any]] | None = None
    ) -> None:
        """Create or replace the world in `service` with `state` and the given fault plan."""
        await self._request(service, "POST", "/reset", json={"state": dict(state), "faults": faults or []})

    async def state(self, service: str) -> dict[str, Any]:
        """The `GET /state` document: `state`, `calls` per endpoint, `faults` with fired counts."""
        return await self._request(service, "GET", "/state")

    async def drop(self) -> None:
        """Delete the world from every service (missing worlds are fine)."""
        for service in self.urls:
            await self._request(service, "DELETE", "/world")

    async def _request(self, service: str, method: str, path: str, **kwargs: Any) -> Any:
        url = self.urls.get(service)
        if url is None:
            raise ServiceError(f"no URL for service '{service}'", hint=f"known: {sorted(self.urls)}")
        try:
            async with httpx.AsyncClient(timeout=TIMEOUT_S) as client:
                response = await client.request(
                    method, url + path, headers={WORLD_HEADER: self.world}, **kwargs
                )
        except httpx.HTTPError as e:
            raise ServiceError(f"{service} service at {url} unreachable: {e}") from None
        if response.status_code >= 400:
            raise ServiceError(
                f"{service} {method} {path} failed ({response.status_code}): {_error_text(response)}"
            )
        return response.json()


def bind_world(world: str, urls: Mapping[str, str]) -> None:
    """Record the sample's world and the service URLs in the sample store for the tools."""
    store().set(_STORE_WORLD, world)
    store().set(_STORE_URLS, dict(urls))


def bound_world() -> tuple[str, dict[str, str]] | None:
    """The world and URLs `bind_world` recorded for the current sample, if any."""
    world = store().get(_STORE_WORLD)
    return (world, store().get(_STORE_URLS)) if world else None


async def call_service(
    service: str,
    method: str,
    path: str,
    *,
    params: Mapping[str, Any] | None = None,
    json: Mapping[str, Any] | None = None,
) -> Any:
    """One domain request from a tool; any failure becomes a `ToolError` the model can read."""
    bound = bound_world()
    if bound is None:
        raise ToolError(f"{service} is not available: no service world is set up for this sample")
    world, urls = bound
    url = urls.get(service)
    if url is None:
        raise ToolError(f"{service} is not available in this task")
    clean = {k: v for k, v in (params or {}).items() if v not in (None, "")}
    try:
        async with httpx.AsyncClient(timeout=TIMEOUT_S) as client:
            response = await client.request(
                method, url + path, params=clean, json=dict(json) if json is not None else None,
                headers={WORLD_HEADER: world},
            )
    except httpx.HTTPError as e:
        raise ToolError(f"{service} service unreachable: {e}") from None
    if response.status_code >= 400:
        raise ToolError(f"{service} error {response.status_code}: {_error_text(response)}")
    return response.json()


def _error_text(response: httpx.Response) -> str:
    try:
        return str(response.json().get("error", response.text))
    except ValueError:
        return response.text[:300]
