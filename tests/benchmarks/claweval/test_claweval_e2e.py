"""`forge-eval run claweval` offline with the real embedded model (llama.cpp, CPU) as agent and judge.

The model is a 0.5B smoke test, so the assertions are about the pipeline (upstream's mock services, loop
and grader in its own venv, judge recorded as not comparable), not about scores.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from forge_eval.models import EMBEDDED_MODELS

pytestmark = pytest.mark.e2e


def test_offline_run_with_the_embedded_model_and_smoke_judge(
    claweval_tree: Path, claweval_python: Path, tmp_path: Path
) -> None:
    if not EMBEDDED_MODELS.get("qwen-0.5b").installed():
        pytest.skip("qwen-0.5b weights not installed")
    out = tmp_path / "run"
    forge = Path(sys.executable).with_name("forge-eval")
    command = [
        str(forge), "run", "claweval", "--seeds", "2", "--epochs", "1", "--judge", "qwen-0.5b",
        "--data-dir", str(claweval_tree), "--out", str(out), "-T", "task_ids=T020_inventory_check",
        # without the sandbox tools' schemas the prompt fits the embedded model's 8192-token context
        "-T", "sandbox=none",
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads((out / "results.json").read_text())
    assert results["benchmark"] == "claweval" and results["harness"] == "claw-loop"
    assert results["threshold"] == 0.75 and len(results["seeds"]) == 2
    assert results["judge"]["comparable"] is False
    assert results["judge"]["prompt_sha256"] is None  # upstream's code: hashed in the protocol record
    (judge_prompt,) = [e for e in results["protocol"]["elements"] if e["element"] == "judge_prompt"]
    assert judge_prompt["official"]["path"] == "src/claw_eval/graders/llm_judge.py" and judge_prompt["same"]
    assert results["protocol"]["comparable"] is False
    trials = pd.read_csv(out / "trials.csv")
    assert len(trials) == 2 and trials["score"].between(0, 1).all()
    assert (trials["passed"] == (trials["score"] >= 0.75)).all()
    # the score is upstream's summary: one trial per seed, padded with 0 up to its 3
    score = results["metrics"]["mean_score"]
    assert "score_summary.py" in score["estimator"]
    by_seed = trials.groupby("seed")["score"].sum() / 3
    assert [s["estimate"] for s in score["per_seed"]] == pytest.approx(list(by_seed), abs=1e-9)
    assert results["metrics"]["pass^3"]["estimate"] == 0.0
