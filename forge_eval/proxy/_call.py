"""One harness call through the proxy: key -> parse -> upstream -> record -> answer (JSON or synthesized SSE).

The answer is sent only once the call's record is written (as durably as `ProxyConfig.durability` says),
so every response a harness received is recorded even if the proxy is killed right after, and a record
that cannot be written (full disk, a writer error) fails only this call, with a 500 in the harness's API
format. A stream whose 200 headers already went out (keep-alives) gets the error as the API's error event.
A harness that hangs up first is recorded with `client_disconnected`.

The record is written as the dict built here, not through a `CallRecord` (validating and dumping the model
cost ~40 µs a call): the fields an upstream fills in are type-checked as its answer comes in (`_ANSWER`),
the rest come from the parsed request and the proxy itself, so every record written reads back.
"""

import asyncio
import hashlib
import logging
import os
import time
from collections.abc import Callable
from typing import Any

from pydantic import TypeAdapter, ValidationError
from starlette.requests import Request
from starlette.types import Receive, Scope, Send
from typing_extensions import TypedDict  # pydantic reads typing.TypedDict only from Python 3.12

from forge_eval.proxy._adapters import Adapter
from forge_eval.proxy._body import read_json
from forge_eval.proxy._canonical import BadRequest, CanonicalRequest
from forge_eval.proxy._exchange import AsgiExchange, Exchange, Header
from forge_eval.proxy._json import dumps
from forge_eval.proxy._keys import parse_attempt, verify_key
from forge_eval.proxy._rollouts import RolloutState
from forge_eval.proxy._state import ProxyState
from forge_eval.proxy._upstream import UpstreamError, UpstreamResult
from forge_eval.proxy._writer import RecordWriteError
from forge_eval.proxy.records import UpstreamFailure

_SSE_HEADERS = [
    (b"content-type", b"text/event-stream; charset=utf-8"),
    (b"cache-control", b"no-cache"),
    (b"x-accel-buffering", b"no"),
]
_HARNESS_BY_AGENT = {"codex": "codex", "claude-cli": "claude_code", "openclaw": "openclaw"}


class _Answer(TypedDict):
    """The typed fields of a call record that an upstream's answer fills in."""

    finish_reason: str | None
    prompt_token_ids: list[int] | None
    completion_token_ids: list[int] | None
    completion_logprobs: list[float] | None
    policy_version: int | None
    endpoint: str | None
    http_status: int | None
    t_upstream_start: float | None
    t_upstream_end: float | None


_ANSWER = TypeAdapter(_Answer)

logger = logging.getLogger(__name__)


def presented_key(request: Request | Exchange) -> str | None:
    """The API key a client sent, as `x-api-key` (Anthropic) or `Authorization: Bearer` (OpenAI)."""
    key = request.headers.get("x-api-key")
    if key:
        return key.strip()
    auth = request.headers.get("authorization", "")
    return auth[7:].strip() if auth.lower().startswith("bearer ") else None


def resolve_rollout(proxy: ProxyState, request: Request | Exchange) -> RolloutState:
    """The rollout a call belongs to, by path prefix or signed key; `BadRequest(401)` otherwise."""
    params = request.path_params
    key = presented_key(request)
    signed = verify_key(proxy.config.secret, key) if key and key.startswith("fk.") else None
    if key and key.startswith("fk.") and signed is None:
        raise BadRequest("the rollout API key is not valid (bad signature or format)", 401, "invalid_api_key")
    if "rollout" in params:
        attempt = parse_attempt(params["attempt"])
        if attempt is None:
            raise BadRequest(
                f"attempt in the URL must be a number, got {params['attempt']!r}", 401, "invalid_api_key"
            )
        wanted = (params["rollout"], attempt)
        if signed is not None and signed != wanted:
            raise BadRequest("the API key belongs to another rollout than the URL", 401, "invalid_api_key")
    elif signed is not None:
        wanted = signed
    else:
        raise BadRequest(
            "no rollout: use the /r/<rollout>/<attempt>/ URL prefix or a signed rollout API key",
            401,
            "invalid_api_key",
        )
    state = proxy.rollouts.get(*wanted)
    if state is None:
        raise BadRequest(f"unknown rollout {wanted[0]!r} attempt {wanted[1]}", 401, "invalid_api_key")
    return state


async def send_json(
    exchange: Exchange, status: int, payload: dict[str, Any], headers: list[Header] | None = None
) -> None:
    await exchange.respond(status, [(b"content-type", b"application/json"), *(headers or [])], dumps(payload))


class ApiEndpoint:
    """The endpoint of one API (chat, responses, anthropic, completions) for every rollout: served on an
    `Exchange` by the proxy's own listener, and an ASGI app for any other server."""

    def __init__(self, proxy: ProxyState, adapter: Adapter) -> None:
        self.proxy = proxy
        self.adapter = adapter

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.serve(AsgiExchange(scope, receive, send))

    async def serve(self, exchange: Exchange) -> None:
        t_received = time.time()
        proxy = self.proxy
        try:
            state = resolve_rollout(proxy, exchange)
            if proxy.paused:
                retry = str(proxy.config.pause_retry_after_s).encode()
                body = self.adapter.error_body(429, "the policy is being updated; retry shortly", "paused")
                await send_json(exchange, 429, body, [(b"retry-after", retry)])
                return
            if state.expired(t_received):
                raise BadRequest(f"rollout {state.record.rollout_id!r} is past its deadline", 403, "deadline")
            config = proxy.config
            body, raw = await read_json(
                exchange, config.max_body_bytes, config.body_timeout_s, exchange.arrived_body()
            )
            canonical = self.adapter.parse(body, state.conversations)
            if not config.model_allowed(canonical.model):
                raise BadRequest(f"the model {canonical.model!r} does not exist", 404, "model_not_found")
        except BadRequest as e:
            error = self.adapter.error_body(e.status, e.message, e.code)
            await send_json(exchange, e.status, error, e.headers)
            return
        call = _Call(proxy, self.adapter, state, exchange, body, raw, canonical, t_received)
        proxy.call_started()
        state.in_flight += 1
        try:
            await call.run()
        finally:
            state.in_flight -= 1
            proxy.call_ended()


class _Call:
    def __init__(
        self,
        proxy: ProxyState,
        adapter: Adapter,
        state: RolloutState,
        exchange: Exchange,
        body: dict[str, Any],
        raw: bytes,
        canonical: CanonicalRequest,
        t_received: float,
    ) -> None:
        self.proxy = proxy
        self.adapter = adapter
        self.state = state
        self.canonical = canonical
        self.exchange = exchange
        self.headers_sent = False
        self.hung_up = False
        rollout = state.record
        request_hash = hashlib.sha256(raw).hexdigest()[:24]  # half blake2b's time where SHA-NI is there
        call_id = os.urandom(16).hex()
        retry_of = state.remember_request(request_hash, call_id)
        agent = exchange.headers.get("user-agent")
        harness = rollout.harness or next(
            (h for a, h in _HARNESS_BY_AGENT.items() if agent and a in agent), None
        )
        self.record: dict[str, Any] = {
            "call_id": call_id,
            "rollout_id": rollout.rollout_id,
            "attempt_id": rollout.attempt,
            "group_uid": rollout.group_uid,
            "seq": state.take_seq(),
            "request_hash": request_hash,
            "retry_of": retry_of,
            "api": adapter.api,
            "path": exchange.path,
            "stream": canonical.stream,
            "user_agent": agent,
            "harness": harness,
            "model_alias": canonical.model,
            "original_request": body,
            "t_received": t_received,
            "policy_version": proxy.policy_version,
            "served_request": {},
        }

    async def run(self) -> None:
        """Serve the call. The upstream is awaited in this task (no task or `asyncio.wait` per call: ~20 µs
        less); a hang-up cancels that wait (a callback of the exchange, no watching task), and a slow
        stream gets keep-alives. Both stop before anything else is sent."""
        rollout, caller = self.state.record, asyncio.current_task()
        assert caller is not None

        def hung_up() -> None:
            self.hung_up = True
            caller.cancel()

        unwatch = self.exchange.on_hangup(hung_up)
        stop_keepalives = self._keepalives() if self.canonical.stream else None
        error: UpstreamError | None = None
        try:
            try:
                result = await self.proxy.upstream.complete(
                    self.canonical,
                    rollout.sampling,
                    route_key=f"{rollout.rollout_id}/{rollout.attempt}",
                    call_seq=self.record["seq"],
                )
            except asyncio.CancelledError:
                if not self.hung_up or caller.uncancel() > 0:  # cancelled by someone else (shutdown)
                    raise
                self.record["client_disconnected"] = True
                await self._write()
                return
            except UpstreamError as e:
                error = e
            except Exception as e:  # an upstream bug must still answer the harness and leave a record
                error = UpstreamError("transport", f"upstream failed: {type(e).__name__}: {e}")
            unwatch()
            if stop_keepalives is not None:
                stop_keepalives()
            if error is not None:
                await self._fail(error)
            else:
                await self._deliver(result)
        finally:
            unwatch()
            if stop_keepalives is not None:
                stop_keepalives()

    def _keepalives(self) -> Callable[[], None]:
        """Once the upstream has not answered a stream for `keepalive_s`, a task sends its 200 headers and
        then a keep-alive event each `keepalive_s`; returns what stops them (no task for a prompt answer)."""
        loop, period = asyncio.get_running_loop(), self.proxy.config.keepalive_s
        beating: list[asyncio.Task] = []

        async def beat() -> None:
            while True:
                if not self.headers_sent:
                    await self.exchange.start_stream(_SSE_HEADERS)
                    self.headers_sent = True
                await self.exchange.send_chunk(self.adapter.keepalive)
                await asyncio.sleep(period)

        timer = loop.call_later(period, lambda: beating.append(loop.create_task(beat())))

        def stop() -> None:
            timer.cancel()
            for task in beating:
                task.cancel()

        return stop

    async def _deliver(self, result: UpstreamResult) -> None:
        response = result.response
        try:
            answer = _ANSWER.validate_python(
                {
                    "finish_reason": response.finish_reason,
                    "prompt_token_ids": response.prompt_token_ids,
                    "completion_token_ids": response.completion_token_ids,
                    "completion_logprobs": response.completion_logprobs,
                    "policy_version": self.record["policy_version"]
                    if response.policy_version is None
                    else response.policy_version,
                    "endpoint": result.endpoint,
                    "http_status": result.http_status,
                    "t_upstream_start": result.t_start,
                    "t_upstream_end": result.t_end,
                }
            )
        except ValidationError as e:
            where, why = ".".join(map(str, e.errors()[0]["loc"])), e.errors()[0]["msg"]
            message = f"the upstream's answer cannot be recorded: {where}: {why}"
            failure = UpstreamError(
                "http_5xx",
                message,
                result.http_status,
                result.failures,
                served_request=result.served_request,
                endpoint=result.endpoint,
            )
            await self._fail(failure)
            return
        returned = self.adapter.render(self.canonical, response)  # a stream carries the same content
        self.record.update(
            answer,
            returned_response=returned,
            served_request=result.served_request,
            upstream_response=result.raw,
            usage=response.usage,
        )
        await self._account(result.failures, answered=True)
        self.record["client_disconnected"] = self.hung_up
        if not await self._write(answer_failure=True):
            return
        self.adapter.remember(self.canonical, response, self.state.conversations)
        if self.canonical.stream:
            if not self.headers_sent:
                await self.exchange.start_stream(_SSE_HEADERS)
            data = b"".join(self.adapter.stream_events(self.canonical, response))
            await self.exchange.send_chunk(data, end=True)
        else:
            await send_json(self.exchange, 200, returned)

    async def _fail(self, error: UpstreamError) -> None:
        status = error.client_status
        body = self.adapter.error_body(status, error.message, error.kind)
        self.record.update(
            returned_response=body,
            served_request=error.served_request or {},
            endpoint=error.endpoint,
            http_status=error.http_status,
            error_kind=error.kind,
            client_disconnected=self.hung_up,
            t_upstream_end=time.time(),
        )
        await self._account(error.failures, answered=False)
        if await self._write(answer_failure=True):
            await self._send_error(status, error.message, error.kind)

    async def _send_error(self, status: int, message: str, code: str | None) -> None:
        if self.headers_sent:
            await self.exchange.send_chunk(self.adapter.stream_error(status, message, code), end=True)
        else:
            await send_json(self.exchange, status, self.adapter.error_body(status, message, code))

    async def _account(self, failures: list[UpstreamFailure], answered: bool) -> None:
        """Count upstream failures (recovered ones too) on the call and on its rollout."""
        self.record["upstream_failures"] = failures
        # every failure of an answered call was retried; the last failure of an unanswered one was not
        self.record["retry_count"] = len(failures) if answered else max(0, len(failures) - 1)
        version = self.record.get("policy_version")
        rollout = self.state.record
        if version is not None and version not in rollout.policy_versions:
            rollout.policy_versions.append(version)
        rollout.n_calls = max(rollout.n_calls, self.record["seq"] + 1)
        if failures:
            for failure in failures:
                rollout.upstream_failures[failure.kind] = rollout.upstream_failures.get(failure.kind, 0) + 1
            rollout.upstream_failures_last_at = failures[-1].at
            await self.proxy.writer.write_rollout(rollout)

    async def _write(self, answer_failure: bool = False) -> bool:
        """Write the call's record; on failure answer a 500 (when `answer_failure`) and return False."""
        self.record["t_delivered"] = time.time()
        try:
            await self.proxy.writer.write_call(self.record)
        except RecordWriteError as e:
            logger.warning("call %s of %s not recorded: %s", self.record["call_id"], self.state.key, e)
            if answer_failure:
                message = f"the proxy could not record this call, so it is not delivered: {e}"
                await self._send_error(500, message, "record_write_failed")
            return False
        return True
