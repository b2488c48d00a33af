"""The control plane (admin key): create rollouts, post rewards and statuses, list calls, pause/resume.

Served on its own listener (`create_control_app`), never next to the harness-facing routes. Every field is
type-checked before use, so a malformed one is a 400 naming it, not a 500. A change the proxy cannot save
(full disk) is a 503 saying so: a rollout's key is handed out only once its record is on disk, so that a
restarted proxy knows every key it ever gave.
"""

import asyncio
import contextlib
import hmac
import math
import time
from collections.abc import AsyncIterator
from typing import Any

from pydantic import ValidationError
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from forge_eval.proxy._adapters import ConversationStore, openai_error
from forge_eval.proxy._body import loads_json, read_body
from forge_eval.proxy._call import presented_key
from forge_eval.proxy._canonical import BadRequest
from forge_eval.proxy._keys import ROLLOUT_ID, parse_attempt, sign_key, valid_rollout_id
from forge_eval.proxy._records import read_calls, stored_attempt
from forge_eval.proxy._rollouts import RolloutState
from forge_eval.proxy._state import ProxyState
from forge_eval.proxy._writer import RecordWriteError
from forge_eval.proxy.records import RolloutRecord

# the statuses a rollout backend reports -> the record's termination
STATUSES = {
    "exited": "completed",
    "completed": "completed",
    "timeout": "timeout",
    "crash": "harness_crash",
    "harness_crash": "harness_crash",
    "oom": "oom",
    "evicted": "evicted",
    "aborted": "aborted",
    "proxy_terminal_error": "proxy_terminal_error",
}
_CREATE_FIELDS = (
    "rollout_id",
    "attempt",
    "group_uid",
    "task_id",
    "seed",
    "epoch",
    "harness",
    "mode",
    "sampling",
    "deadline_s",
    "pod",
    "node",
)
_TOKEN_FIELDS = (
    "call_id",
    "seq",
    "model_alias",
    "prompt_token_ids",
    "completion_token_ids",
    "completion_logprobs",
    "policy_version",
    "finish_reason",
    "error_kind",
)


def _error(status: int, message: str, code: str | None = None, headers: list | None = None) -> JSONResponse:
    response = JSONResponse(openai_error(status, message, code), status_code=status)
    response.raw_headers.extend(headers or [])
    return response


def _number(body: dict[str, Any], name: str, default: float | None = None) -> float | None:
    value = body.get(name, default)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise BadRequest(f"{name} must be a finite number, got {value!r}")
    return float(value)


def _integer(body: dict[str, Any], name: str) -> int | None:
    value = body.get(name)
    if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
        raise BadRequest(f"{name} must be an integer, got {value!r}")
    return value


class Control:
    """Handlers of the control routes; every one checks the admin key first."""

    def __init__(self, proxy: ProxyState) -> None:
        self.proxy = proxy
        self._creating: dict[tuple[str, int], tuple[asyncio.Lock, int]] = {}

    def routes(self) -> list[Route]:
        guarded = self._guard
        return [
            Route("/rollouts", guarded(self.create), methods=["POST"]),
            Route("/rollouts", guarded(self.list_rollouts), methods=["GET"]),
            Route("/rollouts/{rollout_id}", guarded(self.show), methods=["GET"]),
            Route("/rollouts/{rollout_id}", guarded(self.delete), methods=["DELETE"]),
            Route("/rollouts/{rollout_id}/reward", guarded(self.reward), methods=["POST"]),
            Route("/rollouts/{rollout_id}/status", guarded(self.status), methods=["POST"]),
            Route("/rollouts/{rollout_id}/calls", guarded(self.calls), methods=["GET"]),
            Route("/admin/pause", guarded(self.pause), methods=["POST"]),
            Route("/admin/resume", guarded(self.resume), methods=["POST"]),
            Route("/admin/weights", guarded(self.weights), methods=["POST"]),
        ]

    def _guard(self, handler: Any) -> Any:
        async def endpoint(request: Request) -> Response:
            key = (presented_key(request) or "").encode("utf-8", "surrogateescape")
            admin_key = str(self.proxy.config.admin_key).encode()
            if not hmac.compare_digest(key, admin_key):
                return _error(401, "the control plane needs the admin key (Authorization: Bearer <key>)")
            try:
                return await handler(request)
            except BadRequest as e:
                return _error(e.status, e.message, e.code, e.headers)
            except RecordWriteError as e:
                message = f"the proxy could not save this change, so it is not made: {e}"
                return _error(503, message, "record_write_failed")

        return endpoint

    async def _json(self, request: Request, optional: bool = False) -> dict[str, Any]:
        config = self.proxy.config
        raw = await read_body(request, config.max_body_bytes, config.body_timeout_s)
        if optional and not raw.strip():
            return {}
        body = loads_json(raw)
        if not isinstance(body, dict):
            raise BadRequest(f"request body must be a JSON object, got {type(body).__name__}")
        return body

    @contextlib.asynccontextmanager
    async def _one_create(self, key: tuple[str, int]) -> AsyncIterator[None]:
        """Creates of one (rollout, attempt) one at a time: a second waits until the first is on disk."""
        lock, users = self._creating.get(key, (asyncio.Lock(), 0))
        self._creating[key] = (lock, users + 1)
        try:
            async with lock:
                yield
        finally:
            lock, users = self._creating[key]
            if users == 1:
                del self._creating[key]
            else:
                self._creating[key] = (lock, users - 1)

    def _state(self, request: Request, body: dict[str, Any] | None = None) -> RolloutState:
        rollout_id = request.path_params["rollout_id"]
        raw = (body or {}).get("attempt", request.query_params.get("attempt"))
        if raw is None:
            state = self.proxy.rollouts.latest(rollout_id)
        else:
            attempt = parse_attempt(raw)
            if attempt is None:
                raise BadRequest(f"attempt must be a non-negative integer, got {raw!r}")
            state = self.proxy.rollouts.get(rollout_id, attempt)
        if state is None:
            raise BadRequest(
                f"unknown rollout {rollout_id!r}" + (f" attempt {raw}" if raw is not None else ""), 404
            )
        return state

    def _describe(self, state: RolloutState) -> dict[str, Any]:
        rollout_id, attempt = state.key
        return {
            "rollout": state.record.model_dump(mode="json"),
            "api_key": sign_key(self.proxy.config.secret, rollout_id, attempt),
            "base_path": f"/r/{rollout_id}/{attempt}",
            "in_flight": state.in_flight,
        }

    async def create(self, request: Request) -> Response:
        """Idempotent on (rollout_id, attempt): while it is live, after a release and after a restart the
        same rollout comes back (its record and calls as stored; `seq` goes on), never a second one with
        the same key. `DELETE ?purge=1` first to start an attempt afresh."""
        body = await self._json(request)
        unknown = sorted(set(body) - set(_CREATE_FIELDS))
        if unknown:
            raise BadRequest(f"unknown field(s) {unknown}; accepted: {list(_CREATE_FIELDS)}")
        rollout_id = body.get("rollout_id")
        if not valid_rollout_id(rollout_id):
            raise BadRequest(f"rollout_id must match {ROLLOUT_ID.pattern} (whole), got {rollout_id!r}")
        if "attempt" in body and parse_attempt(body["attempt"]) is None:
            raise BadRequest(f"attempt must be a non-negative integer, got {body['attempt']!r}")
        try:
            record = RolloutRecord(**body, t_start=time.time())
        except ValidationError as e:
            raise BadRequest(f"invalid rollout: {e.errors()[0]['loc']}: {e.errors()[0]['msg']}") from None
        key = (record.rollout_id, record.attempt)
        async with self._one_create(key):
            state = self.proxy.rollouts.get(*key)
            if state is None:
                stored = await asyncio.to_thread(stored_attempt, self.proxy.config.records_dir, *key)
                if stored is not None:  # released (or a previous proxy's): reopened where it stopped
                    await self.proxy.writer.reopen(*key)
                    state = self.proxy.rollouts.restore(*stored)
                else:
                    await self.proxy.writer.write_rollout(record)  # on disk before its key is handed out
                    state, _ = self.proxy.rollouts.add(record)
                    return JSONResponse(self._describe(state), status_code=201)
        return JSONResponse(self._describe(state))

    async def list_rollouts(self, request: Request) -> Response:
        states = [self._describe(s) for s in self.proxy.rollouts.all()]
        return JSONResponse({"rollouts": states})

    async def show(self, request: Request) -> Response:
        return JSONResponse(self._describe(self._state(request)))

    async def reward(self, request: Request) -> Response:
        body = await self._json(request)
        state = self._state(request, body)
        reward = _number(body, "reward")
        if reward is None:
            raise BadRequest("reward is required (a finite number)")
        state.record.reward = reward
        if isinstance(body.get("verifier_output"), dict):
            state.record.verifier_output = body["verifier_output"]
        if isinstance(body.get("answer"), str):
            state.record.answer = body["answer"]
        await self.proxy.writer.write_rollout(state.record)
        return JSONResponse(self._describe(state))

    async def status(self, request: Request) -> Response:
        body = await self._json(request)
        state = self._state(request, body)
        status = body.get("status")
        if not isinstance(status, str) or status not in STATUSES:
            raise BadRequest(f"status must be one of {sorted(STATUSES)}, got {status!r}")
        exit_code = _integer(body, "exit_code")
        record = state.record
        record.termination = STATUSES[status]
        if exit_code is not None:
            record.exit_code = exit_code
        record.t_end = time.time()
        record.n_calls = state.next_seq
        state.conversations = ConversationStore()  # the harness is gone: nothing will continue them
        await self.proxy.writer.write_rollout(record)
        return JSONResponse(self._describe(state))

    async def calls(self, request: Request) -> Response:
        state = self._state(request)
        fmt = request.query_params.get("format", "raw")
        if fmt not in ("raw", "tokens"):
            raise BadRequest(f"format must be raw or tokens, got {fmt!r}")
        records = await asyncio.to_thread(read_calls, self.proxy.config.records_dir, *state.key)
        if fmt == "tokens":
            rows = [r.model_dump(mode="json", include=set(_TOKEN_FIELDS)) for r in records]
        else:
            rows = [r.model_dump(mode="json") for r in records]
        return JSONResponse({"rollout_id": state.key[0], "attempt": state.key[1], "calls": rows})

    async def delete(self, request: Request) -> Response:
        rollout_id = request.path_params["rollout_id"]
        gone = self.proxy.rollouts.remove(rollout_id)
        if not gone:
            raise BadRequest(f"unknown rollout {rollout_id!r}", 404)
        purge = request.query_params.get("purge") in ("1", "true")
        for state in gone:
            if purge:
                await self.proxy.writer.purge(*state.key)
            else:
                await self.proxy.writer.release(state.record)
        return JSONResponse({"deleted": rollout_id, "attempts": [s.key[1] for s in gone], "purged": purge})

    async def pause(self, request: Request) -> Response:
        """New calls get 429 + Retry-After; answers once in-flight calls drained (or the timeout passed)."""
        body = await self._json(request, optional=True)
        timeout = _number(body, "drain_timeout_s", 60.0)
        self.proxy.paused = True
        if self.proxy.in_flight:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.proxy.idle.wait(), timeout)
        return JSONResponse({"paused": True, "in_flight": self.proxy.in_flight})

    async def resume(self, request: Request) -> Response:
        self.proxy.paused = False
        return JSONResponse({"paused": False, "policy_version": self.proxy.policy_version})

    async def weights(self, request: Request) -> Response:
        """Record the new policy version (and the endpoints that serve it, when they moved)."""
        body = await self._json(request)
        version = _integer(body, "version")
        if version is None:
            raise BadRequest("version is required (an integer)")
        endpoints = body.get("endpoints")
        if endpoints is not None:
            setter = getattr(self.proxy.upstream, "set_endpoints", None)
            if not (isinstance(endpoints, list) and endpoints and all(isinstance(e, str) for e in endpoints)):
                raise BadRequest("endpoints must be a non-empty list of URLs")
            if setter is None:
                raise BadRequest("this upstream has no endpoints to change")
            setter(endpoints)
        self.proxy.policy_version = version
        return JSONResponse({"policy_version": version, "paused": self.proxy.paused})
