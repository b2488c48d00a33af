"""Fixtures of the harness tests: the scripted forgelab policy served as an OpenAI-compatible model."""

from collections.abc import Iterator

import pytest

from forge_eval.training.proxy import ScriptedUpstream, ServerThread, serve_in_thread
from tests.harnesses._policy import ForgeToolPolicy


@pytest.fixture(scope="module")
def scripted_model(monkeypatch_module: pytest.MonkeyPatch) -> Iterator[tuple[ScriptedUpstream, ServerThread]]:
    """The policy as Inspect model `openai-api/scripted/scripted-policy` (base URL in the env)."""
    upstream = ScriptedUpstream(policy=ForgeToolPolicy())
    with serve_in_thread(upstream.app()) as server:
        monkeypatch_module.setenv("SCRIPTED_API_KEY", "unused")
        yield upstream, server


@pytest.fixture(scope="module")
def monkeypatch_module() -> Iterator[pytest.MonkeyPatch]:
    with pytest.MonkeyPatch.context() as patch:
        yield patch
