"""`forge-eval run weblab` offline with the embedded model: real model steps in a real browser, scored.

One task, one seed, two steps keep it to about a minute on an idle 2-core box (each step is one CPU
model call on a ~900-token text page); the README's `--seeds 2 --limit 4` run is the same pipeline, longer.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from inspect_ai.log import read_eval_log

from forge_eval.models import default_model

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

MAX_STEPS = 2


def test_weblab_run_with_the_embedded_model(tmp_path: Path) -> None:
    model = default_model()
    if not model.installed():
        pytest.skip("embedded model weights not installed (scripts/setup.d/20-embedded-models.sh)")
    out = tmp_path / "weblab"
    command = ["run", "weblab", "--seeds", "1", "-T", "task_ids=dict-pos", "-T", f"max_steps={MAX_STEPS}"]
    command += ["-T", "max_tokens=160", "--out", str(out)]
    done = subprocess.run(
        [sys.executable, "-m", "forge_eval._cli.main", *command], capture_output=True, text=True, timeout=900
    )
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads((out / "results.json").read_text())
    assert results["benchmark"] == "weblab" and results["harness"] == "molmoweb"
    assert results["status"] == "complete" and results["metrics"]["success_rate"]["n_trials"] == 1
    assert (out / "report.html").exists()
    (log_path,) = sorted((out / "logs").glob("*.eval"))
    (sample,) = read_eval_log(str(log_path), resolve_attachments=True).samples or []
    assert sample.id == "dict-pos" and sample.metadata["observation"] == "text"
    assert sample.error is None and sample.limit is None  # ended by its step cap or an answer, not a limit
    score = sample.scores["weblab_verifier"]
    assert score.value in (0.0, 1.0) and 1 <= score.metadata["steps"] <= MAX_STEPS
    # Each browser step follows one call of the embedded model that produced tokens.
    calls = [e for e in sample.events if e.event == "model"]
    assert len(calls) == score.metadata["steps"]
    for call in calls:
        assert model.name in call.model and call.output.usage and call.output.usage.output_tokens > 0
        assert "Interactive elements:" in call.input[-1].text and "/url:" not in call.input[-1].text
