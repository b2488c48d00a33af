"""Client of the recording proxy's control plane (admin key): create rollouts, report outcomes, read calls.

The trainer side of the proxy contract: `POST /rollouts`, `POST /rollouts/{id}/status`,
`POST /rollouts/{id}/reward`, `GET /rollouts/{id}` and `GET /rollouts/{id}/calls` (reference
rl-training.md §5). `ProxyControl` is the interface the AgentLoop needs; `HttpProxyControl` speaks HTTP
to the proxy's control listener (a TCP URL or `unix:<socket path>`), or to its control app in-process.
"""

from dataclasses import dataclass
from typing import Any, Protocol

import httpx

from forge_eval._errors import ForgeError
from forge_eval.proxy.records import CallRecord, RolloutRecord
from forge_eval.sandbox import RolloutOutcome


@dataclass(frozen=True)
class ProxyRollout:
    """A rollout as the proxy created it: the record, the harness's signed key and its base path."""

    record: RolloutRecord
    api_key: str
    base_path: str


class ProxyControl(Protocol):
    async def create_rollout(self, fields: dict[str, Any]) -> ProxyRollout: ...

    async def report(self, rollout_id: str, attempt: int, outcome: RolloutOutcome) -> None: ...

    async def fetch(self, rollout_id: str, attempt: int) -> tuple[RolloutRecord, list[CallRecord]]: ...

    async def release(self, rollout_id: str) -> None: ...


class HttpProxyControl:
    """`ProxyControl` over HTTP.

    Args:
        base_url: The control plane's address, e.g. http://127.0.0.1:8378, or `unix:/path/control.sock`.
        admin_key: The control plane's admin key.
        timeout_s: Per-request timeout.
    """

    def __init__(
        self,
        base_url: str,
        admin_key: str,
        *,
        timeout_s: float = 60.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        if base_url.startswith("unix:") and transport is None:
            transport = httpx.AsyncHTTPTransport(uds=base_url.removeprefix("unix:"))
            base_url = "http://forge-proxy-control"
        self._client = httpx.AsyncClient(
            base_url=base_url,
            headers={"Authorization": f"Bearer {admin_key}"},
            timeout=timeout_s,
            transport=transport,
        )

    @classmethod
    def in_process(cls, control_app: Any, admin_key: str, *, timeout_s: float = 60.0) -> "HttpProxyControl":
        """A client of `create_control_app(...)` called directly, with no listener at all. Use it from
        the event loop that serves the data plane (e.g. inside `serve_in_task`)."""
        transport = httpx.ASGITransport(app=control_app)
        return cls("http://forge-proxy-control", admin_key, timeout_s=timeout_s, transport=transport)

    async def _call(self, method: str, path: str, **kwargs: Any) -> dict[str, Any]:
        try:
            response = await self._client.request(method, path, **kwargs)
        except httpx.HTTPError as e:
            raise ForgeError(
                f"the recording proxy at {self.base_url} did not answer {method} {path}: {e}",
                hint="start the proxy and check the agent loop's control_url",
            ) from None
        if response.status_code >= 400:
            try:
                message = response.json()["error"]["message"]
            except (ValueError, KeyError, TypeError):
                message = response.text[:200]
            raise ForgeError(
                f"the recording proxy refused {method} {path} (HTTP {response.status_code}): {message}",
                hint="check the admin key (FORGE_PROXY_ADMIN_KEY) and the rollout fields",
            )
        return response.json()

    async def create_rollout(self, fields: dict[str, Any]) -> ProxyRollout:
        body = await self._call("POST", "/rollouts", json=fields)
        return ProxyRollout(RolloutRecord.model_validate(body["rollout"]), body["api_key"], body["base_path"])

    async def report(self, rollout_id: str, attempt: int, outcome: RolloutOutcome) -> None:
        status = {"status": outcome.status, "attempt": attempt, "exit_code": outcome.exit_code}
        await self._call("POST", f"/rollouts/{rollout_id}/status", json=status)
        if outcome.reward is not None:
            reward: dict[str, Any] = {"reward": outcome.reward, "attempt": attempt}
            if outcome.verifier_output is not None:
                reward["verifier_output"] = outcome.verifier_output
            if outcome.answer is not None:
                reward["answer"] = outcome.answer
            await self._call("POST", f"/rollouts/{rollout_id}/reward", json=reward)

    async def fetch(self, rollout_id: str, attempt: int) -> tuple[RolloutRecord, list[CallRecord]]:
        shown = await self._call("GET", f"/rollouts/{rollout_id}", params={"attempt": attempt})
        calls = await self._call("GET", f"/rollouts/{rollout_id}/calls", params={"attempt": attempt})
        return (
            RolloutRecord.model_validate(shown["rollout"]),
            [CallRecord.model_validate(c) for c in calls["calls"]],
        )

    async def release(self, rollout_id: str) -> None:
        """Drop the finished rollout from the proxy's memory; its records stay on disk."""
        await self._call("DELETE", f"/rollouts/{rollout_id}")

    async def aclose(self) -> None:
        await self._client.aclose()
