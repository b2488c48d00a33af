"""Fixtures of the proxy tests: a scripted upstream server and proxies in background threads."""

import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from forge_eval.proxy import (
    ProxyConfig,
    ScriptedUpstream,
    ServerThread,
    create_app,
    create_control_app,
    serve_in_thread,
)

SECRET = "test-secret"
ADMIN_KEY = "test-admin-key"
ADMIN = {"Authorization": f"Bearer {ADMIN_KEY}"}


def start_cli_proxy(
    upstream_url: str, records: Path, port: int, control_port: int, *extra: str, **popen: Any
) -> subprocess.Popen:
    """`forge-eval proxy serve` in a subprocess (credentials in its environment, never in argv), once its
    /healthz answers 200. `extra`: more command-line options."""
    argv = [sys.executable, "-m", "forge_eval._cli.main", "proxy", "serve", "--upstream", upstream_url]
    argv += ["--port", str(port), "--control-port", str(control_port), "--records", str(records), *extra]
    env = {**os.environ, "FORGE_PROXY_SECRET": SECRET, "FORGE_PROXY_ADMIN_KEY": ADMIN_KEY}
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, **popen)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                return process
        except httpx.HTTPError:
            time.sleep(0.1)
    process.kill()
    raise AssertionError(f"proxy did not start: {process.stderr.read().decode()[-2000:]}")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "harness: runs a real harness binary (Codex CLI, Claude Code, OpenClaw)"
    )


@dataclass
class Proxy:
    """A running proxy (data plane `url`, control plane `control_url`), its records and an admin client."""

    server: ServerThread
    records: Path
    config: ProxyConfig
    app: Any

    @property
    def url(self) -> str:
        return self.server.url

    @property
    def control_url(self) -> str:
        assert self.server.control_url
        return self.server.control_url

    def admin(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        return httpx.request(method, self.control_url + path, headers=ADMIN, timeout=30, **kwargs)

    def rollout(self, rollout_id: str, attempt: int = 0, **fields: Any) -> dict[str, Any]:
        """Create a rollout; returns the control plane's answer (with `api_key` and `base_path`)."""
        answer = self.admin(
            "POST", "/rollouts", json={"rollout_id": rollout_id, "attempt": attempt, **fields}
        )
        assert answer.status_code in (200, 201), answer.text
        return answer.json()


@pytest.fixture(scope="module")
def upstream() -> Iterator[tuple[ScriptedUpstream, ServerThread]]:
    scripted = ScriptedUpstream()
    with serve_in_thread(scripted.app()) as server:
        yield scripted, server


@pytest.fixture
def scripted(upstream: tuple[ScriptedUpstream, ServerThread]) -> Iterator[ScriptedUpstream]:
    """The shared scripted upstream, reset to well-behaved before and after each test."""
    policy = upstream[0]
    _reset(policy)
    yield policy
    _reset(policy)


def _reset(policy: ScriptedUpstream) -> None:
    policy.fail_next, policy.fail_status, policy.fail_message = 0, 503, "scripted failure"
    policy.delay_s, policy.reject_token_fields = 0.0, False
    policy.requests.clear()


@pytest.fixture
def make_proxy(
    tmp_path: Path, upstream: tuple[ScriptedUpstream, ServerThread]
) -> Iterator[Callable[..., Proxy]]:
    """Start proxies (default: over the scripted upstream); all are stopped after the test."""
    started: list[ServerThread] = []

    def start(upstreams: list[str] | None = None, upstream_object: Any = None, **options: Any) -> Proxy:
        records = tmp_path / f"records{len(started)}"
        options.setdefault("upstream_backoff_s", 0.01)
        options.setdefault("records_dir", records)
        config = ProxyConfig(
            secret=SECRET, admin_key=ADMIN_KEY, upstreams=upstreams or [upstream[1].url], **options
        )
        app = create_app(config, upstream_object)
        server = ServerThread(app, control=create_control_app(app)).start()
        started.append(server)
        return Proxy(server, config.records_dir, config, app)

    yield start
    for server in started:
        server.stop()


@pytest.fixture
def proxy(make_proxy: Callable[..., Proxy], scripted: ScriptedUpstream) -> Proxy:
    return make_proxy()
