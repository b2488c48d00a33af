"""Fixtures of the harness tests: the scripted forgelab policy served as an OpenAI-compatible model."""

from collections.abc import Iterator

import pytest

from forge_eval.proxy import ScriptedUpstream, ServerThread, serve_in_thread
from tests.harnesses._policy import ForgeToolPolicy, probe_command


@pytest.fixture(scope="module")
def scripted_model(monkeypatch_module: pytest.MonkeyPatch) -> Iterator[tuple[ScriptedUpstream, ServerThread]]:
    """The policy as Inspect model `openai-api/scripted/scripted-policy`. Its shell command also tries to
    reach this model server directly, which a sandboxed harness must not be able to do."""
    policy = ForgeToolPolicy()
    upstream = ScriptedUpstream(policy=policy)
    with serve_in_thread(upstream.app()) as server:
        policy.command = probe_command(f"{server.url}/v1/models")
        monkeypatch_module.setenv("SCRIPTED_API_KEY", "unused")
        yield upstream, server


@pytest.fixture(scope="module")
def monkeypatch_module() -> Iterator[pytest.MonkeyPatch]:
    with pytest.MonkeyPatch.context() as patch:
        yield patch
