"""`forge-eval run weblab --seeds 2 --limit 4` offline with the embedded model (slow: CPU inference)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from inspect_ai.log import read_eval_log

from forge_eval.models import default_model

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.slow,
    # Not yet seen to pass: on the shared 2-core box every sample hit its time limit before one step, and
    # the run takes up to 25 min. Opt in until an idle run has measured it.
    pytest.mark.skipif(
        not os.environ.get("FORGE_WEBLAB_E2E"),
        reason="opt-in: set FORGE_WEBLAB_E2E=1 (up to 25 min on 2 cores)",
    ),
]


def test_weblab_run_with_the_embedded_model(tmp_path: Path) -> None:
    if not default_model().installed():
        pytest.skip("embedded model weights not installed")
    out = tmp_path / "weblab"
    # Three steps per episode and short replies (a JSON action needs < 100 tokens) bound the CPU model's
    # time; the pipeline is the same as with the default 20 steps.
    command = ["run", "weblab", "--seeds", "2", "--limit", "4", "-T", "max_steps=3", "-T", "max_tokens=160"]
    command += ["--out", str(out)]
    done = subprocess.run(
        [sys.executable, "-m", "forge_eval._cli.main", *command], capture_output=True, text=True, timeout=1500
    )
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads((out / "results.json").read_text())
    assert results["benchmark"] == "weblab" and results["harness"] == "molmoweb"
    assert results["seeds"] == [0, 1] and results["n_tasks"] == 4 and results["status"] == "complete"
    assert results["metrics"]["success_rate"]["n_trials"] == 8
    assert (out / "report.html").exists()
    logs = [read_eval_log(str(p)) for p in sorted((out / "logs").glob("*.eval"))]
    samples = [s for log in logs for s in log.samples or []]
    assert len(samples) == 8
    for sample in samples:
        assert sample.metadata["observation"] == "text"  # the embedded model cannot see images
        assert 1 <= sample.scores["weblab_verifier"].metadata["steps"] <= 3
        assert sample.scores["weblab_verifier"].value in (0.0, 1.0)
