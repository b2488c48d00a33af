"""The shared shape of every local service: per-sample worlds, reset/state/health, fault injection.

Each service is a real Starlette app. Its domain state lives in *worlds*: one pydantic state per
world id (header `X-Forge-World`), so concurrent samples never see each other's writes. A world is
created by `POST /reset` with an initial state and an optional fault plan; verifiers read it back
with `GET /state`.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeVar

from pydantic import BaseModel, ValidationError
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from forge_eval.benchmarks.services._faults import Fault, FaultPlan

WORLD_HEADER = "X-Forge-World"
DEFAULT_WORLD = "default"

M = TypeVar("M", bound=BaseModel)


class ServiceHTTPError(Exception):
    """An error a handler returns to the caller as JSON `{"error": message}` with `status`."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def not_found(kind: str, key: str) -> ServiceHTTPError:
    return ServiceHTTPError(404, f"no {kind} with id '{key}'")


@dataclass
class World:
    """One sample's isolated copy of a service's state, with its fault plan and call counts."""

    state: BaseModel
    faults: FaultPlan
    calls: Counter[str] = field(default_factory=Counter)


@dataclass
class Call:
    """What a domain handler sees: the world's state and the parsed request."""

    state: Any
    path: dict[str, str]
    query: dict[str, str]
    body: dict[str, Any]

    def parse(self, model: type[M]) -> M:
        """Validate the JSON body against `model`; errors become a readable 422."""
        return parse_model(model, self.body)


Handler = Callable[[Call], Awaitable[Any]]
F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class Endpoint:
    """One domain operation: `name` is what fault plans and call counts refer to."""

    name: str
    method: str
    path: str
    handler: Handler


def parse_model(model: type[M], data: Any) -> M:
    try:
        return model.model_validate(data)
    except ValidationError as e:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'body'}: {err['msg']}" for err in e.errors()
        )
        raise ServiceHTTPError(422, f"invalid request: {problems}") from None


def endpoint(method: str, path: str) -> Callable[[F], F]:
    """Declare a service method as a domain operation, named after the class attribute that holds it
    (`Service.endpoints`)."""

    def mark(handler: F) -> F:
        handler.__endpoint__ = (method, path)  # type: ignore[attr-defined]
        return handler

    return mark


class Service:
    """A local stateful HTTP service. Subclasses give a name, a state model and endpoints: methods
    declared with `@endpoint(method, path)`, or an `endpoints()` of their own."""

    name: ClassVar[str]
    state_model: ClassVar[type[BaseModel]]

    def endpoints(self) -> list[Endpoint]:
        """The service's domain operations: its `@endpoint` methods, in the order they are defined."""
        found = []
        for name, attribute in vars(type(self)).items():
            if declared := getattr(attribute, "__endpoint__", None):
                found.append(Endpoint(name, *declared, getattr(self, name)))
        return found

    def app(self) -> Starlette:
        """A fresh Starlette app with its own world store."""
        return _ServiceApp(self).build()


class _ResetBody(BaseModel):
    state: dict[str, Any] = {}
    faults: list[Fault] = []


def _json(data: Any, status: int = 200) -> Response:
    # pydantic models (records) are dumped here so handlers can return them directly.
    payload = json.dumps(data, default=lambda o: o.model_dump(mode="json"), ensure_ascii=False)
    return Response(payload, status_code=status, media_type="application/json")


class _ServiceApp:
    """The routes around a service's endpoints; holds that app's worlds."""

    def __init__(self, service: Service) -> None:
        self.service = service
        self.endpoints = service.endpoints()
        self.worlds: dict[str, World] = {}

    def build(self) -> Starlette:
        routes = [
            Route("/health", self.health, methods=["GET"]),
            Route("/reset", self.reset, methods=["POST"]),
            Route("/state", self.state, methods=["GET"]),
            Route("/world", self.drop, methods=["DELETE"]),
        ]
        routes += [
            Route(e.path, self._wrap(e), methods=[e.method], name=e.name) for e in self.endpoints
        ]
        return Starlette(routes=routes)

    @staticmethod
    def _world_id(request: Request) -> str:
        return request.headers.get(WORLD_HEADER, DEFAULT_WORLD)

    def _world(self, request: Request) -> World:
        world_id = self._world_id(request)
        try:
            return self.worlds[world_id]
        except KeyError:
            raise ServiceHTTPError(
                404, f"{self.service.name}: world '{world_id}' does not exist; POST /reset creates it"
            ) from None

    async def health(self, request: Request) -> Response:
        return _json({"service": self.service.name, "status": "ok", "worlds": len(self.worlds)})

    async def reset(self, request: Request) -> Response:
        try:
            raw = await _read_body(request)
            body = parse_model(_ResetBody, raw)
            state = parse_model(self.service.state_model, body.state)
            names = {e.name for e in self.endpoints}
            unknown = sorted({f.endpoint for f in body.faults} - names)
            if unknown:
                raise ServiceHTTPError(
                    422, f"fault for unknown endpoint(s) {unknown}; valid endpoints: {sorted(names)}"
                )
        except ServiceHTTPError as e:
            return _json({"error": e.message}, e.status)
        world_id = self._world_id(request)
        self.worlds[world_id] = World(state=state, faults=FaultPlan(body.faults))
        return _json({"service": self.service.name, "world": world_id})

    async def state(self, request: Request) -> Response:
        try:
            world = self._world(request)
        except ServiceHTTPError as e:
            return _json({"error": e.message}, e.status)
        return _json(
            {
                "service": self.service.name,
                "world": self._world_id(request),
                "state": world.state.model_dump(mode="json"),
                "calls": dict(world.calls),
                "faults": world.faults.describe(),
            }
        )

    async def drop(self, request: Request) -> Response:
        existed = self.worlds.pop(self._world_id(request), None) is not None
        return _json({"deleted": existed})

    def _wrap(self, endpoint: Endpoint) -> Callable[[Request], Awaitable[Response]]:
        async def run(request: Request) -> Response:
            try:
                world = self._world(request)
                world.calls[endpoint.name] += 1
                fault = world.faults.take(endpoint.name)
                if fault is not None:
                    return _json({"error": fault.message, "injected": True}, fault.status)
                call = Call(
                    state=world.state,
                    path=dict(request.path_params),
                    query=dict(request.query_params),
                    body=await _read_body(request),
                )
                return _json(await endpoint.handler(call))
            except ServiceHTTPError as e:
                return _json({"error": e.message}, e.status)

        return run


async def _read_body(request: Request) -> dict[str, Any]:
    raw = await request.body()
    if not raw:
        return {}
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as e:
        raise ServiceHTTPError(400, f"request body is not JSON: {e}") from None
    if not isinstance(data, dict):
        raise ServiceHTTPError(400, "request body must be a JSON object")
    return data
