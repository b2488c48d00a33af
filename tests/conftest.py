"""Fixtures every test folder shares: the team's copies of the official benchmark data and upstream trees.

They sit beside the checkout (`../shared/data/benchmarks`, `../shared/upstream`), or where
`FORGE_BENCHMARK_DATA` / `FORGE_UPSTREAM_TREES` say. A test that needs a copy takes its fixture and is
skipped, with the path it looked at, where the copy is missing (the product itself never reads them: it
downloads official data or takes `--data-dir`).
"""

from __future__ import annotations

import os
from pathlib import Path

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


@pytest.fixture(scope="session")
def claweval_data() -> Path:
    return shared_copy(BENCHMARK_DATA / "claweval", "shared Claw-Eval data")


@pytest.fixture(scope="session")
def qwenclawbench_data() -> Path:
    return shared_copy(BENCHMARK_DATA / "qwenclawbench", "shared QwenClawBench data")


@pytest.fixture(scope="session")
def mcpatlas_data() -> Path:
    return shared_copy(BENCHMARK_DATA / "mcpatlas", "shared MCP-Atlas data")


@pytest.fixture(scope="session")
def webvoyager_data() -> Path:
    return shared_copy(BENCHMARK_DATA / "webvoyager", "shared WebVoyager data")


@pytest.fixture(scope="session")
def online_mind2web_data() -> Path:
    return shared_copy(BENCHMARK_DATA / "online_mind2web", "shared Online-Mind2Web data")


@pytest.fixture(scope="session")
def osworld_data() -> Path:
    return shared_copy(BENCHMARK_DATA / "osworld_verified", "shared OSWorld-Verified data")


@pytest.fixture(scope="session")
def upstream_trees() -> Path:
    return shared_copy(UPSTREAM_TREES, "the pinned upstream trees")
