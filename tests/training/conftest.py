"""Shared fixture: the real recording proxy over its scripted upstream, served from threads."""

from collections.abc import Iterator
from pathlib import Path

import pytest

from forge_eval.training.proxy import ProxyConfig, ScriptedUpstream, ServerThread, create_app, serve_in_thread

PROXY_SECRET = "training-test-secret"


@pytest.fixture(scope="session")
def proxy_records(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("records")


@pytest.fixture(scope="session")
def proxy_url(proxy_records: Path) -> Iterator[str]:
    with serve_in_thread(ScriptedUpstream().app()) as upstream:
        config = ProxyConfig(records_dir=proxy_records, secret=PROXY_SECRET, upstreams=[upstream.url])
        server = ServerThread(create_app(config)).start()
        try:
            yield server.url
        finally:
            server.stop()
