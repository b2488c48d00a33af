"""Helpers of the sandbox and rollout-backend tests: leak scans over /proc and a loopback HTTP server to
reach."""

import http.server
import os
import shutil
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

needs_bwrap = pytest.mark.skipif(
    any(shutil.which(tool) is None for tool in ("bwrap", "socat", "setpriv")),
    reason="bubblewrap/socat/setpriv missing: run scripts/setup.d/35-sandbox.sh (CI does)",
)


def processes_with(marker: str) -> list[int]:
    """Host pids whose environment holds `marker` (e.g. FORGE_SANDBOX_ID=<id>): leaked sandbox processes."""
    needle = marker.encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        if needle in environ.split(b"\0"):
            found.append(int(entry.name))
    return found


class _Hello(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
        body = self.server.body  # type: ignore[attr-defined]
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@contextmanager
def http_server(body: bytes) -> Iterator[int]:
    """A real HTTP server on a free host loopback port answering every GET with `body`; yields the port."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Hello)
    server.body = body  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()
