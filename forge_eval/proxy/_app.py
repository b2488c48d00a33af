"""The proxy's two ASGI apps, on separate listeners.

The data plane (`create_app`) is what harnesses reach: every API under `/v1` and `/r/{rollout}/{attempt}/v1`
plus `/healthz`. The control plane (`create_control_app`) creates rollouts and takes rewards; it is never
routed on the data plane, so a harness (which holds only its rollout key) cannot reach it at all.
Every error, expected or not, is answered as JSON in the caller's API format, never as plain text.
"""

import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route
from starlette.types import Receive, Scope, Send

from forge_eval.proxy._adapters import ADAPTERS, openai_error
from forge_eval.proxy._body import read_json
from forge_eval.proxy._call import ApiEndpoint, resolve_rollout
from forge_eval.proxy._canonical import BadRequest
from forge_eval.proxy._config import ProxyConfig
from forge_eval.proxy._control import Control
from forge_eval.proxy._exchange import Exchange
from forge_eval.proxy._http_upstream import HttpUpstream
from forge_eval.proxy._json import dumps
from forge_eval.proxy._records import unreleased_attempts
from forge_eval.proxy._state import ProxyState
from forge_eval.proxy._upstream import ProxyUpstream
from forge_eval.proxy._writer import RecordWriteError, RecordWriter

logger = logging.getLogger(__name__)

# API -> path after the version prefix
API_PATHS = {
    "chat": "/chat/completions",
    "responses": "/responses",
    "anthropic_messages": "/messages",
    "completions": "/completions",
}
PREFIXES = ("/v1", "/r/{rollout}/{attempt}/v1")
ExchangeHandler = Callable[[Exchange], Awaitable[None]]


def error_response(
    path: str, status: int, message: str, code: str | None = None, headers: list | None = None
) -> JSONResponse:
    """An error in the format of the API `path` belongs to, as a response."""
    response = JSONResponse(_error_body(path, status, message, code), status_code=status)
    response.raw_headers.extend(headers or [])
    return response


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
            return error_response(request.url.path, e.status, e.message, e.code)
        wanted = request.path_params.get("model_id")
        aliases = self._aliases() if wanted is None else [wanted]
        if wanted is not None and not self.proxy.config.model_allowed(wanted):
            return error_response(
                request.url.path, 404, f"the model {wanted!r} does not exist", "model_not_found"
            )
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
            config = self.proxy.config
            body, _ = await read_json(request, config.max_body_bytes, config.body_timeout_s)
            body.setdefault("max_tokens", 1)
            canonical = self.anthropic.parse(body, state.conversations)
        except BadRequest as e:
            return error_response(request.url.path, e.status, e.message, e.code, e.headers)
        return JSONResponse({"input_tokens": await self.proxy.upstream.count_tokens(canonical)})


def _routes(proxy: ProxyState, endpoints: dict[str, ApiEndpoint]) -> list[BaseRoute]:
    aux = _Auxiliary(proxy)
    routes: list[BaseRoute] = []
    for prefix in PREFIXES:
        routes.append(Route(prefix + "/messages/count_tokens", aux.count_tokens, methods=["POST"]))
        routes.append(Route(prefix + "/models", aux.models, methods=["GET"]))
        routes.append(Route(prefix + "/models/{model_id:path}", aux.models, methods=["GET"]))
        for path, endpoint in endpoints.items():
            routes.append(Route(prefix + path, endpoint, methods=["POST"]))

    routes.append(_healthz(proxy))
    return routes


class _DataPlane(Starlette):
    """Starlette, with the model calls dispatched before its middleware and router.

    Those layers (error middleware, exception middleware, a regex per route) cost ~40 µs a call and do
    nothing for an endpoint that answers every error itself. A model call's path is matched by hand to the
    same routes (`/v1/<api>`, `/r/<rollout>/<attempt>/v1/<api>`, POST) and the last-resort 500 is kept;
    everything else goes through Starlette. The proxy's own listener (`_protocol`) asks `model_route`
    before it makes any ASGI scope; other servers call the app.
    """

    def __init__(self, endpoints: dict[str, ApiEndpoint], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._endpoints = endpoints
        self._handlers = {path: self._guarded(endpoint) for path, endpoint in endpoints.items()}

    def _match(self, method: str, path: str) -> tuple[str, dict[str, str]] | None:
        """The API path (`/chat/completions`, ...) and path parameters of a model call, else None."""
        if method != "POST":
            return None
        if path.startswith("/v1/"):
            return (path[3:], {}) if path[3:] in self._endpoints else None
        if path.startswith("/r/"):
            parts = path.split("/", 4)  # "", "r", rollout, attempt, "v1/<api>"
            api = parts[4][2:] if len(parts) == 5 and parts[4].startswith("v1/") else ""
            if parts[2] and parts[3] and api in self._endpoints:
                return api, {"rollout": parts[2], "attempt": parts[3]}
        return None

    def model_route(self, method: str, path: str) -> tuple[ExchangeHandler, dict[str, str]] | None:
        """The handler of a model call and its path parameters (None: not a model call)."""
        found = self._match(method, path)
        return None if found is None else (self._handlers[found[0]], found[1])

    @staticmethod
    def _guarded(endpoint: ApiEndpoint) -> ExchangeHandler:
        async def serve(exchange: Exchange) -> None:
            try:
                await endpoint.serve(exchange)
            except Exception as exc:  # an API-shaped 500 if nothing went out yet, then re-raised (logged)
                if not exchange.started:
                    body, status = _server_error_body(exchange.path, exc), 500
                    await exchange.respond(status, [(b"content-type", b"application/json")], dumps(body))
                raise

        return serve

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        found = None
        if scope["type"] == "http" and not scope.get("root_path"):
            found = self._match(scope["method"], scope["path"])
        if found is None:
            await super().__call__(scope, receive, send)
            return
        scope["app"] = self
        scope["path_params"] = found[1]
        started = False

        async def sending(message: Any) -> None:
            nonlocal started
            started = True
            await send(message)

        try:
            await self._endpoints[found[0]](scope, receive, sending)
        except Exception as exc:  # as Starlette's ServerErrorMiddleware: an API-shaped 500, then re-raised
            if not started:
                await (await _server_error(Request(scope), exc))(scope, receive, send)
            raise


def _healthz(proxy: ProxyState) -> Route:
    """200 while the record writer works; 503 with the reason while it cannot write (disk full, stopped).
    Each call retries the failed write's growth, so space freed shows here before the next call."""

    async def healthz(request: Request) -> Response:
        problem = proxy.writer.recheck()
        body = {
            "status": "ok" if problem is None else "unhealthy",
            "paused": proxy.paused,
            "in_flight": proxy.in_flight,
            "rollouts": len(proxy.rollouts),
            "policy_version": proxy.policy_version,
        }
        if problem is not None:
            body["reason"] = problem
        return JSONResponse(body, status_code=200 if problem is None else 503)

    return Route("/healthz", healthz, methods=["GET"])


async def _http_error(request: Request, exc: Any) -> Response:
    status = getattr(exc, "status_code", 404)
    message = f"no route {request.method} {request.url.path}" if status == 404 else str(exc.detail)
    return error_response(request.url.path, status, message, "not_found" if status == 404 else None)


def _error_body(path: str, status: int, message: str, code: str | None = None) -> dict[str, Any]:
    """An error in the format of the API `path` belongs to (Anthropic's for `/messages`, else OpenAI's)."""
    anthropic = path.endswith(("/messages", "/messages/count_tokens"))
    body = ADAPTERS.get("anthropic_messages").error_body(status, message, code) if anthropic else None
    return body or openai_error(status, message, code)


def _server_error_body(path: str, exc: Exception) -> dict[str, Any]:
    message = f"internal error of the proxy: {type(exc).__name__}: {exc}"
    return _error_body(path, 500, message, "internal_error")


async def _server_error(request: Request, exc: Exception) -> Response:
    """The last resort: a bug still gets an API-shaped 500 (uvicorn logs the traceback)."""
    return JSONResponse(_server_error_body(request.url.path, exc), status_code=500)


_HANDLERS = {404: _http_error, 405: _http_error, Exception: _server_error}


def create_app(config: ProxyConfig, upstream: ProxyUpstream | None = None) -> Starlette:
    """The data plane. Without `upstream`, an `HttpUpstream` over `config.upstreams`.

    Rollouts that a previous proxy on the same records directory created and the trainer has not
    released are served again (their keys keep working, `seq` continues). Serve the control plane with
    `create_control_app(app)` on a listener of its own.
    """
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
    proxy = ProxyState(
        config=config, upstream=upstream, writer=RecordWriter(config.records_dir, config.durability)
    )
    proxy.idle.set()
    restored = [proxy.rollouts.restore(*found) for found in unreleased_attempts(config.records_dir)]
    if restored:
        logger.warning("resumed %d unreleased rollouts from %s", len(restored), config.records_dir)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        try:
            yield
        finally:
            # call counts and policy versions live in memory between writes; a rollout this process
            # only resumed is left alone (it may belong to another proxy on the same records directory)
            for state in (s for s in proxy.rollouts.all() if s.served_calls):
                try:
                    await proxy.writer.write_rollout(state.record)
                except RecordWriteError as e:
                    logger.error("rollout %s not saved at shutdown: %s", state.key, e)
            proxy.writer.close()
            await proxy.upstream.aclose()

    endpoints = {path: ApiEndpoint(proxy, ADAPTERS.get(api)) for api, path in API_PATHS.items()}
    app = _DataPlane(
        endpoints, routes=_routes(proxy, endpoints), lifespan=lifespan, exception_handlers=_HANDLERS
    )
    app.state.proxy = proxy
    return app


def create_control_app(app: Starlette) -> Starlette:
    """The control plane of the data plane `app` (same rollouts, writer and upstream).

    Its bearer token is `config.admin_key`. It owns no resources: the data plane's lifespan flushes
    the records and closes the writer.
    """
    proxy: ProxyState = app.state.proxy
    control = Starlette(routes=[*Control(proxy).routes(), _healthz(proxy)], exception_handlers=_HANDLERS)
    control.state.proxy = proxy
    return control
