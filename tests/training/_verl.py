"""Imports of veRL for the tests marked `verl` (skipped with the install hint when veRL is absent)."""

import pytest

core_algos = pytest.importorskip(
    "verl.trainer.ppo.core_algos", reason="veRL 0.9.1 is not installed (run scripts/setup.d/40-verl.sh)"
)
