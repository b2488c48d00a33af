"""`ablate credit` shows progress while a run trains in its worker process: one stderr line per
held-out evaluation (step, success, pace, ETA)."""

import re

import pytest

from forge_eval.training.ablation import RunConfig
from forge_eval.training.ablation._run import Run

pytest.importorskip("torch", reason="torch is installed by scripts/setup.d/40-verl.sh (CI does)")


@pytest.mark.slow
def test_a_training_run_prints_a_line_per_evaluation(tmp_path, capsys):
    config = RunConfig(
        variant="masked", seed=3, steps=2, eval_every=1, n_heldout=3, tasks_per_step=2, group_size=3
    )
    Run(config, tmp_path).execute()
    lines = [line for line in capsys.readouterr().err.splitlines() if " masked seed 3 " in line]
    stamp = r"^\[\d\d:\d\d:\d\d\] masked seed 3 \(token-mean\): "
    assert len(lines) == 3, lines
    assert re.match(stamp + r"step 0/2, held-out success \d+%$", lines[0]), lines[0]
    for line, step in zip(lines[1:], (1, 2), strict=True):
        pace = r", \d+\.\d\d s/step, ETA \d+ s$"
        assert re.match(stamp + f"step {step}/2, held-out success \\d+%" + pace, line), line
    assert lines[2].endswith("ETA 0 s")
