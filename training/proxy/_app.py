"""The proxy's ASGI app: the data plane of every API under `/v1` and `/r/{rollout}/{attempt}/v1`,
plus `/healthz` and the control plane."""

import contextlib
from collections.abc import AsyncIterator
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from forge_eval.training.proxy._adapters import ADAPTERS
from forge_eval.training.proxy._body import read_json
from forge_eval.training.proxy._call import ApiEndpoint, resolve_rollout
from forge_eval.training.proxy._canonical import BadRequest
from forge_eval.training.proxy._config import ProxyConfig
from forge_eval.training.proxy._control import Control
from forge_eval.training.proxy._http_upstream import HttpUpstream
from forge_eval.training.proxy._records import RecordWriter
from forge_eval.training.proxy._state import ProxyState
from forge_eval.training.proxy._upstream import ProxyUpstream

# API -> path after the version prefix
API_PATHS = {
    "chat": "/chat/completions",
    "responses": "/responses",
    "anthropic_messages": "/messages",
    "completions": "/completions",
}
PREFIXES = ("/v1", "/r/{rollout}/{attempt}/v1")


def _openai_error(status: int, message: str, code: str | None = None) -> JSONResponse:
    body = {"error": {"message": message, "type": "invalid_request_error", "param": None, "code": code}}
    return JSONResponse(body, status_code=status)


class _Auxiliary:
    """`/v1/models` and Anthropic's `/v1/messages/count_tokens` (keyed like any other call)."""

    def __init__(self, proxy: ProxyState) -> None:
        self.proxy = proxy
        self.anthropic = ADAPTERS.get("anthropic_messages")

    def _aliases(self) -> list[str]:
        literal = [a for a in self.proxy.config.model_aliases or [] if not any(c in a for c in "*?[")]
        return literal or [self.proxy.config.served_model or "forge-policy"]

    async def models(self, request: Request) -> Response:
        try:
            resolve_rollout(self.proxy, request)
        except BadRequest as e:
            return _openai_error(e.status, e.message, e.code)
        wanted = request.path_params.get("model_id")
        aliases = self._aliases() if wanted is None else [wanted]
        if wanted is not None and not self.proxy.config.model_allowed(wanted):
            return _openai_error(404, f"the model {wanted!r} does not exist", "model_not_found")
        if "anthropic-version" in request.headers:
            data = [
                {"type": "model", "id": a, "display_name": a, "created_at": "2026-01-01T00:00:00Z"}
                for a in aliases
            ]
            if wanted is not None:
                return JSONResponse(data[0])
            return JSONResponse(
                {"data": data, "has_more": False, "first_id": aliases[0], "last_id": aliases[-1]}
            )
        data = [{"id": a, "object": "model", "created": 0, "owned_by": "forge-eval"} for a in aliases]
        return JSONResponse(data[0] if wanted is not None else {"object": "list", "data": data})

    async def count_tokens(self, request: Request) -> Response:
        try:
            state = resolve_rollout(self.proxy, request)
            body, _ = await read_json(request, self.proxy.config.max_body_bytes)
            body.setdefault("max_tokens", 1)
            canonical = self.anthropic.parse(body, state.conversations)
        except BadRequest as e:
            return JSONResponse(self.anthropic.error_body(e.status, e.message, e.code), status_code=e.status)
        return JSONResponse({"input_tokens": await self.proxy.upstream.count_tokens(canonical)})


def _routes(proxy: ProxyState) -> list[BaseRoute]:
    aux = _Auxiliary(proxy)
    routes: list[BaseRoute] = []
    for prefix in PREFIXES:
        routes.append(Route(prefix + "/messages/count_tokens", aux.count_tokens, methods=["POST"]))
        routes.append(Route(prefix + "/models", aux.models, methods=["GET"]))
        routes.append(Route(prefix + "/models/{model_id:path}", aux.models, methods=["GET"]))
        for api, path in API_PATHS.items():
            routes.append(Route(prefix + path, ApiEndpoint(proxy, ADAPTERS.get(api)), methods=["POST"]))

    async def healthz(request: Request) -> Response:
        return JSONResponse(
            {
                "status": "ok",
                "paused": proxy.paused,
                "in_flight": proxy.in_flight,
                "rollouts": len(proxy.rollouts),
                "policy_version": proxy.policy_version,
            }
        )

    routes.append(Route("/healthz", healthz, methods=["GET"]))
    routes.extend(Control(proxy).routes())
    return routes


async def _not_found(request: Request, exc: Any) -> Response:
    status = getattr(exc, "status_code", 404)
    message = f"no route {request.method} {request.url.path}" if status == 404 else str(exc.detail)
    return _openai_error(status, message, "not_found" if status == 404 else None)


def create_app(config: ProxyConfig, upstream: ProxyUpstream | None = None) -> Starlette:
    """The proxy app. Without `upstream`, an `HttpUpstream` over `config.upstreams`."""
    if upstream is None:
        if not config.upstreams:
            raise ValueError("the proxy needs an upstream: give config.upstreams or an upstream object")
        upstream = HttpUpstream(
            config.upstreams,
            model=config.served_model,
            max_retries=config.upstream_retries,
            backoff_s=config.upstream_backoff_s,
            timeout_s=config.upstream_timeout_s,
            token_ids=config.token_ids,
            api_key=config.upstream_api_key,
        )
    proxy = ProxyState(config=config, upstream=upstream, writer=RecordWriter(config.records_dir))
    proxy.idle.set()

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        try:
            yield
        finally:
            for state in proxy.rollouts.all():
                await proxy.writer.write_rollout(state.record)
            proxy.writer.close()
            await proxy.upstream.aclose()

    app = Starlette(
        routes=_routes(proxy), lifespan=lifespan, exception_handlers={404: _not_found, 405: _not_found}
    )
    app.state.proxy = proxy
    return app
