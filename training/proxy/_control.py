"""The control plane (admin key): create rollouts, post rewards and statuses, list calls, pause/resume."""

import asyncio
import contextlib
import hmac
import shutil
import time
from typing import Any

from pydantic import ValidationError
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from forge_eval.training.proxy._adapters import ConversationStore
from forge_eval.training.proxy._call import presented_key
from forge_eval.training.proxy._keys import ROLLOUT_ID, sign_key
from forge_eval.training.proxy._records import attempt_dir, read_calls
from forge_eval.training.proxy._rollouts import RolloutState
from forge_eval.training.proxy._state import ProxyState
from forge_eval.training.records import RolloutRecord

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


class _Refused(Exception):
    def __init__(self, status: int, message: str) -> None:
        self.status = status
        self.message = message


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": {"message": message, "type": "control_error"}}, status_code=status)


async def _json(request: Request) -> dict[str, Any]:
    try:
        body = await request.json()
    except ValueError as e:
        raise _Refused(400, f"request body is not valid JSON: {e}") from None
    if not isinstance(body, dict):
        raise _Refused(400, "request body must be a JSON object")
    return body


class Control:
    """Handlers of the control routes; every one checks the admin key first."""

    def __init__(self, proxy: ProxyState) -> None:
        self.proxy = proxy

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
            key = presented_key(request) or ""
            if not hmac.compare_digest(key.encode(), self.proxy.config.admin_token.encode()):
                return _error(401, "the control plane needs the admin key (Authorization: Bearer <key>)")
            try:
                return await handler(request)
            except _Refused as e:
                return _error(e.status, e.message)

        return endpoint

    def _state(self, request: Request, body: dict[str, Any] | None = None) -> RolloutState:
        rollout_id = request.path_params["rollout_id"]
        attempt = (body or {}).get("attempt", request.query_params.get("attempt"))
        if attempt is None:
            state = self.proxy.rollouts.latest(rollout_id)
        elif str(attempt).isdigit():
            state = self.proxy.rollouts.get(rollout_id, int(attempt))
        else:
            raise _Refused(400, f"attempt must be a non-negative integer, got {attempt!r}")
        if state is None:
            raise _Refused(
                404, f"unknown rollout {rollout_id!r}" + (f" attempt {attempt}" if attempt else "")
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
        body = await _json(request)
        unknown = sorted(set(body) - set(_CREATE_FIELDS))
        if unknown:
            raise _Refused(400, f"unknown field(s) {unknown}; accepted: {list(_CREATE_FIELDS)}")
        rollout_id = body.get("rollout_id")
        if not isinstance(rollout_id, str) or not ROLLOUT_ID.match(rollout_id):
            raise _Refused(400, f"rollout_id must match {ROLLOUT_ID.pattern}, got {rollout_id!r}")
        try:
            record = RolloutRecord(**body, t_start=time.time())
        except ValidationError as e:
            raise _Refused(400, f"invalid rollout: {e.errors()[0]['loc']}: {e.errors()[0]['msg']}") from None
        if record.attempt < 0:
            raise _Refused(400, "attempt must be >= 0")
        state, created = self.proxy.rollouts.add(record)
        if created:
            await self.proxy.writer.write_rollout(state.record)
        return JSONResponse(self._describe(state), status_code=201 if created else 200)

    async def list_rollouts(self, request: Request) -> Response:
        states = [self._describe(s) for s in self.proxy.rollouts.all()]
        return JSONResponse({"rollouts": states})

    async def show(self, request: Request) -> Response:
        return JSONResponse(self._describe(self._state(request)))

    async def reward(self, request: Request) -> Response:
        body = await _json(request)
        state = self._state(request, body)
        reward = body.get("reward")
        if not isinstance(reward, int | float) or isinstance(reward, bool):
            raise _Refused(400, f"reward must be a number, got {reward!r}")
        state.record.reward = float(reward)
        if isinstance(body.get("verifier_output"), dict):
            state.record.verifier_output = body["verifier_output"]
        if isinstance(body.get("answer"), str):
            state.record.answer = body["answer"]
        await self.proxy.writer.write_rollout(state.record)
        return JSONResponse(self._describe(state))

    async def status(self, request: Request) -> Response:
        body = await _json(request)
        state = self._state(request, body)
        status = body.get("status")
        if status not in STATUSES:
            raise _Refused(400, f"status must be one of {sorted(STATUSES)}, got {status!r}")
        record = state.record
        record.termination = STATUSES[status]
        if body.get("exit_code") is not None:
            record.exit_code = int(body["exit_code"])
        record.t_end = time.time()
        record.n_calls = state.next_seq
        state.conversations = ConversationStore()  # the harness is gone: nothing will continue them
        await self.proxy.writer.write_rollout(record)
        return JSONResponse(self._describe(state))

    async def calls(self, request: Request) -> Response:
        state = self._state(request)
        fmt = request.query_params.get("format", "raw")
        if fmt not in ("raw", "tokens"):
            raise _Refused(400, f"format must be raw or tokens, got {fmt!r}")
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
            raise _Refused(404, f"unknown rollout {rollout_id!r}")
        purge = request.query_params.get("purge") in ("1", "true")
        for state in gone:
            if purge:
                path = attempt_dir(self.proxy.config.records_dir, *state.key)
                await asyncio.to_thread(shutil.rmtree, path, True)
            else:
                await self.proxy.writer.write_rollout(state.record)
        return JSONResponse({"deleted": rollout_id, "attempts": [s.key[1] for s in gone], "purged": purge})

    async def pause(self, request: Request) -> Response:
        """New calls get 429 + Retry-After; answers once in-flight calls drained (or the timeout passed)."""
        body = await _json(request) if await request.body() else {}
        timeout = float(body.get("drain_timeout_s", 60.0))
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
        body = await _json(request)
        version = body.get("version")
        if not isinstance(version, int) or isinstance(version, bool):
            raise _Refused(400, f"version must be an integer, got {version!r}")
        endpoints = body.get("endpoints")
        if endpoints is not None:
            setter = getattr(self.proxy.upstream, "set_endpoints", None)
            if not (isinstance(endpoints, list) and endpoints and all(isinstance(e, str) for e in endpoints)):
                raise _Refused(400, "endpoints must be a non-empty list of URLs")
            if setter is None:
                raise _Refused(400, "this upstream has no endpoints to change")
            setter(endpoints)
        self.proxy.policy_version = version
        return JSONResponse({"policy_version": version, "paused": self.proxy.paused})
