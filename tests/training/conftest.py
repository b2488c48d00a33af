"""Shared fixtures (the real recording proxy over its scripted upstream) and the `verl` marker's skip."""

import importlib.util
from collections.abc import Iterator
from pathlib import Path

import pytest

from forge_eval.proxy import (
    ProxyConfig,
    ScriptedUpstream,
    ServerThread,
    create_app,
    create_control_app,
    serve_in_thread,
)

PROXY_SECRET = "training-test-secret"
PROXY_ADMIN_KEY = "training-test-admin-key"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Skip the `verl` tests, with the install hint, where veRL is not installed."""
    try:
        if importlib.util.find_spec("verl") is not None:
            return
    except ValueError:  # a `verl` module object without a spec: treat as absent
        pass
    skip = pytest.mark.skip(reason="veRL 0.9.1 is not installed: run scripts/setup.d/40-verl.sh (CI does)")
    for item in items:
        if "verl" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def proxy_records(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("records")


@pytest.fixture(scope="session")
def proxy_server(proxy_records: Path) -> Iterator[ServerThread]:
    """The real proxy: data plane at `.url`, control plane (admin key PROXY_ADMIN_KEY) at `.control_url`."""
    with serve_in_thread(ScriptedUpstream().app()) as upstream:
        config = ProxyConfig(
            records_dir=proxy_records,
            secret=PROXY_SECRET,
            admin_key=PROXY_ADMIN_KEY,
            upstreams=[upstream.url],
        )
        app = create_app(config)
        server = ServerThread(app, control=create_control_app(app)).start()
        try:
            yield server
        finally:
            server.stop()


@pytest.fixture(scope="session")
def proxy_url(proxy_server: ServerThread) -> str:
    return proxy_server.url


@pytest.fixture(scope="session")
def proxy_control_url(proxy_server: ServerThread) -> str:
    assert proxy_server.control_url
    return proxy_server.control_url
