"""Fixtures for the OSWorld tests: the shared task data and whether a real desktop can run here."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

DATA = Path(
    os.environ.get("FORGE_BENCHMARK_DATA", Path(__file__).parents[3].parent / "shared/data/benchmarks")
)
OSWORLD_DATA = DATA / "osworld_verified"


@pytest.fixture(scope="session")
def osworld_root() -> Path:
    if not (OSWORLD_DATA / "OSWorld_snapshot_ljxpython-b5007a9/evaluation_examples/test_all.json").exists():
        pytest.skip(f"OSWorld-Verified task data not found under {OSWORLD_DATA} (set FORGE_BENCHMARK_DATA)")
    from forge_eval.benchmarks.osworld import data_root

    return data_root(OSWORLD_DATA)


@pytest.fixture(scope="session")
def desktop_ready() -> None:
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
    desktop_env()
