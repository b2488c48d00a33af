"""The real thing: `forge-eval run forgelab` with the embedded model, then `forge-eval analyze`.

Slow on CPU (the model generates every turn), so it runs two quick-subset tasks over two seeds with at
most 10 messages each (10.5 min on a busy 2-core machine without the message limit).
Nothing about the model's skill is asserted, only that its transcripts are read in full and that
every metric is either a number on 0-100 with a CI bracketing it, or absent for lack of eligible
rollouts.
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.runner._checks import check_run_dir

FORGE_EVAL = str(Path(sys.executable).with_name("forge-eval"))


@pytest.mark.e2e
def test_embedded_model_forgelab_run_is_analyzed(tmp_path: Path) -> None:
    run = tmp_path / "run"
    command = [FORGE_EVAL, "run", "forgelab", "--seeds", "2", "--quick", "--limit", "2", "--epochs", "1"]
    command += ["-T", "message_limit=10", "--out", str(run)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=1500)
    assert done.returncode == 0, done.stderr[-3000:]
    check_run_dir(run, seeds=[0, 1], n_tasks=2, model="qwen-0.5b")
    assert "success_rate" in done.stdout and "report:" in done.stdout
    analyzed = subprocess.run(
        [FORGE_EVAL, "analyze", str(run), "--resamples", "1000"], capture_output=True, text=True, timeout=600
    )
    assert analyzed.returncode == 0, analyzed.stderr[-3000:]
    check_behavior(json.loads((run / "behavior.json").read_text()))
    assert 'id="behavior"' in (run / "report.html").read_text()


def check_behavior(data: dict) -> None:
    """What must hold for any run of 2 tasks x 2 seeds, whatever the model did."""
    overall = data["groups"]["overall"]
    assert overall["n_rollouts"] == 4 and overall["n_tasks"] == 2 and overall["n_seeds"] == 2
    assert data["harness"] == "react" and "harness:react" in data["groups"]
    for name, interval in overall["capabilities"].items():
        if interval["estimate"] is None:
            assert interval["n_cells"] == 0, name
            continue
        assert 0.0 <= interval["estimate"] <= 100.0, name
        if interval["ci_low"] is None:  # eligible rollouts in one task only: no interval over tasks
            assert "n_tasks" not in interval and interval["n_cells"] <= 2, name
        else:
            assert interval["ci_low"] <= interval["estimate"] <= interval["ci_high"], name
    assert overall["capabilities"]["format_robustness"]["n_cells"] == 4
    if overall["n_calls"]:
        shares = overall["tool_shares"]["all"]
        assert sum(v["estimate"] for k, v in shares.items() if k != "generic_shell") == pytest.approx(100.0)
        pooled = overall["pooled_shares"]["all"]
        assert sum(v for k, v in pooled.items() if k != "generic_shell") == pytest.approx(100.0)
