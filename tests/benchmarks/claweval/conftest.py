"""Claw-Eval fixtures: the pinned upstream tree (shared copy) and upstream's own venv built from it."""

from __future__ import annotations

from pathlib import Path

import pytest

from forge_eval.benchmarks.claweval import ensure_venv
from tests.conftest import shared_copy

TREE_NAME = "claw-eval+claw-eval@9365e1a"


@pytest.fixture(scope="session")
def claweval_tree(upstream_trees: Path) -> Path:
    return shared_copy(upstream_trees / TREE_NAME, "the pinned Claw-Eval tree")


@pytest.fixture(scope="session")
def claweval_python(claweval_tree: Path) -> Path:
    """Upstream's venv (built once by scripts/setup.d/47-claweval-venv.sh; here if it is missing)."""
    return ensure_venv(claweval_tree)
