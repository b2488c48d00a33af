"""Fixtures every test folder shares: the team's copies of the official benchmark data and upstream trees.

They sit beside the checkout (`../shared/data/benchmarks`, `../shared/upstream`), or where
`FORGE_BENCHMARK_DATA` / `FORGE_UPSTREAM_TREES` say. A test that needs a copy takes its fixture and is
skipped, with the path it looked at, where the copy is missing (the product itself never reads them: it
downloads official data or takes `--data-dir`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

_SHARED = Path(__file__).resolve().parents[2] / "shared"
#: Official task data of the benchmarks, one folder per benchmark.
BENCHMARK_DATA = Path(os.environ.get("FORGE_BENCHMARK_DATA", _SHARED / "data/benchmarks"))
#: Pinned upstream trees (`owner+name@commit`).
UPSTREAM_TREES = Path(os.environ.get("FORGE_UPSTREAM_TREES", _SHARED / "upstream"))


def shared_copy(path: Path, what: str) -> Path:
    """`path`, or skip the test saying which copy is missing and where it was looked for."""
    if not path.exists():
        pytest.skip(f"{what} not found at {path} (set FORGE_BENCHMARK_DATA / FORGE_UPSTREAM_TREES)")
    return path


def _benchmark_data(name: str, folder: str, title: str) -> Any:  # noqa: ANN401 (a pytest fixture)
    """A session fixture `name`: the shared copy of one benchmark's official data (BENCHMARK_DATA/folder)."""

    def data() -> Path:
        return shared_copy(BENCHMARK_DATA / folder, f"shared {title} data")

    return pytest.fixture(data, scope="session", name=name)


claweval_data = _benchmark_data("claweval_data", "claweval", "Claw-Eval")
qwenclawbench_data = _benchmark_data("qwenclawbench_data", "qwenclawbench", "QwenClawBench")
mcpatlas_data = _benchmark_data("mcpatlas_data", "mcpatlas", "MCP-Atlas")
webvoyager_data = _benchmark_data("webvoyager_data", "webvoyager", "WebVoyager")
online_mind2web_data = _benchmark_data("online_mind2web_data", "online_mind2web", "Online-Mind2Web")
osworld_data = _benchmark_data("osworld_data", "osworld_verified", "OSWorld-Verified")


@pytest.fixture(scope="session")
def upstream_trees() -> Path:
    return shared_copy(UPSTREAM_TREES, "the pinned upstream trees")
