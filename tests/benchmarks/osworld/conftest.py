"""Fixtures for the OSWorld tests: the pinned OSWorld tree (task data, evaluators, baseline agent of one
commit) and whether a real desktop can run here."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import UPSTREAM_TREES, shared_copy

#: The snapshot of xlang-ai/OSWorld whose evaluation_examples are the Verified task data.
TREE = "ljxpython+OSWorldUse@f6cee71"


@pytest.fixture(scope="session")
def osworld_root() -> Path:
    from forge_eval.benchmarks.osworld import data_root

    return data_root(shared_copy(UPSTREAM_TREES / TREE, "the pinned OSWorld tree"))


@pytest.fixture(scope="session")
def desktop_ready(osworld_root: Path) -> None:
    """Skip unless the local desktop can start: root, Xvfb & co, OSWorld's checkers."""
    from forge_eval.benchmarks.osworld import make_provider
    from forge_eval.benchmarks.osworld._evaluators import desktop_env

    missing = make_provider("local").requirements()
    if missing:
        pytest.skip(
            "local OSWorld desktop unavailable: " + "; ".join(missing) + " (scripts/setup.d/60-desktop.sh)"
        )
    for app in ("vlc", "gimp", "libreoffice"):
        if shutil.which(app) is None:
            pytest.skip(f"{app} not installed (scripts/setup.d/60-desktop.sh)")
    desktop_env(osworld_root)
