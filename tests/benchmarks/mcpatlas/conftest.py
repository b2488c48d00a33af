"""MCP-Atlas tests decide online/offline themselves: the web benchmarks' probe is forced offline unless a
test forces it online (`force_online`), so a machine with internet sees the same skips as one without."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from forge_eval.benchmarks.mcpatlas import _servers


@pytest.fixture(autouse=True)
def _offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_servers, "online", lambda: False)


@pytest.fixture
def force_online(monkeypatch: pytest.MonkeyPatch) -> Callable[[], None]:
    """Call it to make the probe answer online for the rest of the test."""
    return lambda: monkeypatch.setattr(_servers, "online", lambda: True)
