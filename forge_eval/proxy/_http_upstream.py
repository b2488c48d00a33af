"""OpenAI-compatible HTTP upstreams (vLLM, SGLang, llama.cpp, the embedded model server).

Non-streaming always (streaming loses vLLM's token ids with tool parsers; the proxy synthesizes SSE).
Asks for `return_token_ids` and logprobs; an endpoint that rejects those fields is remembered and asked
without them. A rollout sticks to one endpoint (hash of its key) and moves on only when that one fails.
The client is the proxy's own pooled HTTP/1.1 client (`_http_client`: httptools' parser, a quarter of
aiohttp's CPU per call; the proxy's throughput on 2 cores is bounded by CPU, see bench/proxy_overhead.py).
Bodies are written and read with orjson (`_json`).
"""

import asyncio
import hashlib
import time
from typing import Any

from forge_eval.proxy._canonical import CanonicalRequest
from forge_eval.proxy._http_client import HttpClient, HttpClientError
from forge_eval.proxy._json import dumps, loads
from forge_eval.proxy._openai_parse import parse_upstream, without_token_data
from forge_eval.proxy._upstream import UpstreamError, UpstreamResult, http_error_kind
from forge_eval.proxy.records import ErrorKind, UpstreamFailure

RETRY_STATUSES = frozenset({408, 429, 500, 502, 503, 504})
_TOKEN_FIELDS = ("return_token_ids", "logprobs", "top_logprobs")


def normalize_endpoint(url: str) -> str:
    """`http://h:p`, `http://h:p/` and `http://h:p/v1` all name the same server."""
    url = url.rstrip("/")
    return url[: -len("/v1")] if url.endswith("/v1") else url


class HttpUpstream:
    """Serve canonical requests from one or more OpenAI-compatible servers.

    Args:
        endpoints: Base URLs (with or without `/v1`).
        model: The served model name; when None, the first id of the endpoint's `/v1/models`.
        max_retries: Retries after the first attempt, on transport errors, timeouts, 408, 429 and 5xx.
        backoff_s: First retry delay, doubled each retry, capped at `backoff_max_s`; a `Retry-After`
            header is honoured up to the same cap.
        timeout_s: Per attempt.
        token_ids: Ask for `return_token_ids` and logprobs.
        api_key: Sent as `Authorization: Bearer` (e.g. to a vLLM started with `--api-key`).
    """

    def __init__(
        self,
        endpoints: list[str],
        *,
        model: str | None = None,
        max_retries: int = 4,
        backoff_s: float = 0.25,
        backoff_max_s: float = 8.0,
        timeout_s: float = 600.0,
        token_ids: bool = True,
        api_key: str | None = None,
    ) -> None:
        if not endpoints:
            raise ValueError("at least one upstream endpoint is required")
        self.endpoints = [normalize_endpoint(e) for e in endpoints]
        self.model = model
        self.max_retries = max_retries
        self.backoff_s = backoff_s
        self.backoff_max_s = backoff_max_s
        self.token_ids = token_ids
        self._plain: set[str] = set()  # endpoints that refused the token-id fields
        self.timeout_s = timeout_s
        self._client = HttpClient({"Authorization": f"Bearer {api_key}"} if api_key else None)
        self._models: dict[str, str] = {}

    async def _post(
        self, url: str, body: dict[str, Any], timeout: float | None = None
    ) -> tuple[int, dict[str, str], bytes]:
        """(status, headers, body bytes) of one POST."""
        answer = await self._client.request("POST", url, dumps(body), timeout or self.timeout_s)
        return answer.status, answer.headers, answer.body

    def set_endpoints(self, endpoints: list[str]) -> None:
        """Switch to new endpoints (after a weight update moved the servers)."""
        self.endpoints = [normalize_endpoint(e) for e in endpoints]

    def _sticky(self, route_key: str) -> int:
        return int.from_bytes(hashlib.sha256(route_key.encode()).digest()[:8], "big") % len(self.endpoints)

    async def _model(self, endpoint: str, fallback: str) -> str:
        if self.model:
            return self.model
        if endpoint not in self._models:
            try:
                answer = await self._client.request("GET", f"{endpoint}/v1/models", None, 10.0)
                self._models[endpoint] = loads(answer.body)["data"][0]["id"]
            except (HttpClientError, TimeoutError, ValueError, KeyError, IndexError, TypeError):
                return fallback
        return self._models[endpoint]

    def _body(self, request: CanonicalRequest, sampling: dict[str, Any], model: str, endpoint: str) -> dict:
        body = request.body(model, sampling)
        if self.token_ids and endpoint not in self._plain:
            body["return_token_ids"] = True
            if request.is_completion:
                body["logprobs"] = 0
            else:
                body["logprobs"] = True
                body["top_logprobs"] = 0
        return body

    async def complete(
        self, request: CanonicalRequest, sampling: dict[str, Any], *, route_key: str, call_seq: int
    ) -> UpstreamResult:
        first = self._sticky(route_key)
        failures: list[UpstreamFailure] = []
        path = "/v1/completions" if request.is_completion else "/v1/chat/completions"
        body: dict[str, Any] = {}
        endpoint = self.endpoints[first]
        t_start = time.time()
        attempt = 0
        while True:
            endpoint = self.endpoints[(first + attempt) % len(self.endpoints)]
            body = self._body(request, sampling, await self._model(endpoint, request.model), endpoint)
            kind: ErrorKind
            retry_after: float | None = None
            try:
                status, headers, content = await self._post(endpoint + path, body)
            except TimeoutError as e:
                kind, status, message = "timeout", None, f"upstream timed out: {type(e).__name__}"
            except HttpClientError as e:
                kind, status, message = "transport", None, f"upstream unreachable: {e}"
            else:
                if status == 200:
                    try:
                        raw = loads(content)
                        response = parse_upstream(raw, request.is_completion)
                    except ValueError as e:
                        kind, message = "http_5xx", f"upstream sent an unreadable answer: {e}"
                    else:
                        slim = without_token_data(raw)
                        return UpstreamResult(
                            response, body, slim, endpoint, status, failures, t_start, time.time()
                        )
                else:
                    message = _error_message(status, content)
                    if status in (400, 422) and endpoint not in self._plain and _about_token_fields(message):
                        self._plain.add(endpoint)  # ask again, without the fields, not counted as a retry
                        continue
                    kind = http_error_kind(status, message)
                    retry_after = _retry_after(headers.get("retry-after"))
            failures.append(
                UpstreamFailure(
                    kind=kind,
                    http_status=status,
                    message=message[:500],
                    endpoint=endpoint,
                    at=time.time(),
                    call_seq=call_seq,
                )
            )
            retryable = kind in ("transport", "timeout") or status in RETRY_STATUSES
            if not retryable or attempt >= self.max_retries:
                raise UpstreamError(kind, message, status, failures, body, endpoint)
            delay = min(self.backoff_s * 2**attempt, self.backoff_max_s)
            if retry_after is not None:
                delay = min(max(delay, retry_after), self.backoff_max_s)
            await asyncio.sleep(delay)
            attempt += 1

    async def count_tokens(self, request: CanonicalRequest) -> int:
        """vLLM's `/tokenize` with messages, else llama.cpp's with text, else about 4 characters a token."""
        endpoint = self.endpoints[0]
        model = await self._model(endpoint, request.model)
        text = "\n".join(str(m.get("content") or "") for m in request.messages)
        attempts = (
            {
                "model": model,
                "messages": request.messages,
                **({"tools": request.tools} if request.tools else {}),
            },
            {"content": text},
        )
        for body in attempts:
            try:
                status, _, content = await self._post(f"{endpoint}/tokenize", body, timeout=30.0)
                data = loads(content) if status == 200 else {}
            except (HttpClientError, TimeoutError, ValueError):
                continue
            if isinstance(data, dict) and isinstance(data.get("count"), int):
                return data["count"]
            if isinstance(data, dict) and isinstance(data.get("tokens"), list):
                return len(data["tokens"])
        return max(1, len(text) // 4)

    async def aclose(self) -> None:
        await self._client.aclose()


def _error_message(status: int, content: bytes) -> str:
    try:
        data = loads(content)
    except ValueError:
        return f"HTTP {status}: {content[:300].decode(errors='replace')}"
    error = data.get("error") if isinstance(data, dict) else None
    if isinstance(error, dict):
        return f"HTTP {status}: {error.get('message', error)}"
    if isinstance(data, dict):
        return f"HTTP {status}: {error or data.get('detail') or data.get('message') or data}"
    return f"HTTP {status}: {data}"


def _about_token_fields(message: str) -> bool:
    return any(f in message for f in _TOKEN_FIELDS)


def _retry_after(value: str | None) -> float | None:
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None
