"""A minimal OpenAI-compatible chat server that records every request body (test support).

It answers each call with a `submit` tool call, which ends Inspect's react() loop, so tests can
check what reached the wire (seeds, temperatures) without a real model. forge-eval's own check
requests (`CHECK_HEADER`) are answered like any other but not recorded: tests count the run's calls.
"""

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from forge_eval.runner import RunSpec
from forge_eval.runner._model import CHECK_HEADER


def _reply(body: dict) -> dict:
    call = {
        "id": f"call_{len(body.get('messages', []))}",
        "type": "function",
        "function": {"name": "submit", "arguments": json.dumps({"answer": "42"})},
    }
    has_submit = any(t.get("function", {}).get("name") == "submit" for t in body.get("tools") or [])
    message = {"role": "assistant", "content": "" if has_submit else "42"}
    if has_submit:
        message["tool_calls"] = [call]
    return {
        "id": "rec",
        "object": "chat.completion",
        "created": 0,
        "model": body.get("model", "m"),
        "choices": [
            {"index": 0, "finish_reason": "tool_calls" if has_submit else "stop", "message": message}
        ],
        "usage": {"prompt_tokens": 5, "completion_tokens": 5, "total_tokens": 10},
    }


@dataclass
class Hold:
    """Requests whose messages contain `marker` wait (listed in `held`, their clients' (host, port) in
    `peers`) until `release` is set."""

    marker: str
    release: threading.Event = field(default_factory=threading.Event)
    held: list[dict] = field(default_factory=list)
    peers: list[tuple[str, int]] = field(default_factory=list)


@dataclass
class Outage:
    """Once `after` chat requests have been answered, every later one gets HTTP `status` (`/models`
    still answers): a server that goes down mid-run, or (after=0) one that never could chat."""

    after: int = 0
    status: int = 503
    message: str = "the model is overloaded"


@contextmanager
def recording_server(
    fail_if_contains: list[str] | None = None, hold: Hold | None = None, outage: Outage | None = None
) -> Iterator[tuple[str, list[dict]]]:
    """Yield (base_url, requests) for a server on 127.0.0.1; `requests` fills as calls arrive.

    A request whose messages contain any string in `fail_if_contains` (a list the test may change
    while the server runs) is answered with HTTP 400, which fails that sample without retries.
    """
    seen: list[dict] = []
    failing = fail_if_contains if fail_if_contains is not None else []
    answered = [0]

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
            if self.path.rstrip("/").endswith("/models"):
                self._send(200, {"object": "list", "data": [{"id": "m", "object": "model"}]})
            else:
                self._send(404, {"error": {"message": "not found"}})

        def do_POST(self) -> None:  # noqa: N802
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            text = json.dumps(body.get("messages", []))
            if hold is not None and hold.marker in text and not hold.release.is_set():
                hold.peers.append(self.client_address)
                hold.held.append(body)
                hold.release.wait()
                return
            if outage is not None and answered[0] >= outage.after:
                self._send(outage.status, {"error": {"message": outage.message, "type": "server_error"}})
            elif any(marker in text for marker in failing):
                self._send(400, {"error": {"message": "injected failure", "type": "invalid_request"}})
            else:
                if self.headers.get(CHECK_HEADER) is None:
                    seen.append(body)
                    answered[0] += 1
                self._send(200, _reply(body))

        def _send(self, status: int, payload: dict) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", seen
    finally:
        if hold is not None:
            hold.release.set()
        server.shutdown()
        server.server_close()


def recorded_run(url: str, out: Path, benchmark: str = "probe", **options: Any) -> RunSpec:
    """A run of one seed and one epoch of `benchmark` against the recording server at `url`."""
    model = "openai-api/rec/m"
    return RunSpec(benchmark, seeds=(0,), epochs=1, model=model, model_base_url=url, out=out, **options)
