"""`ablate credit` shows progress without a terminal: one stderr line per held-out evaluation of a run,
from its worker process (step, success, pace, ETA), and one per finished run (runs done of all, the
ablation's ETA)."""

import re
import subprocess
import sys

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


@pytest.mark.slow
def test_ablate_credit_without_a_terminal_prints_progress_to_stderr(tmp_path):
    """The command as a user runs it, output to pipes: every held-out evaluation of every run (from the
    worker processes) and every finished run (runs done of all, the ablation's ETA) on stderr, stdout
    keeping only the results."""
    command = [
        sys.executable, "-m", "forge_eval._cli.main", "ablate", "credit", "--variants", "masked,terminal",
        "--seeds", "1", "--steps", "2", "--eval-every", "1", "--heldout", "3", "--tasks-per-step", "2",
        "--group-size", "2", "--jobs", "1", "--resamples", "100", "--out", str(tmp_path / "out"),
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr[-2000:]
    stamp = r"^\[\d\d:\d\d:\d\d\] "
    err = done.stderr.splitlines()
    for variant in ("masked", "terminal"):
        run = stamp + f"{variant} seed 0 \\(token-mean\\): step"
        evaluations = [line for line in err if re.match(run, line)]
        assert len(evaluations) == 3, err  # steps 0, 1, 2
        assert evaluations[-1].endswith("ETA 0 s"), evaluations
    finished = [line for line in err if re.match(stamp + r"\w+ seed 0 done: ", line)]
    assert len(finished) == 2, err
    pattern = r"held-out success \d+% \(\d+\.\d\d s/step\), {}/2 runs, ETA \d+ (s|min \d\d s)$"
    assert re.search(pattern.format(1), finished[0]), finished[0]
    assert re.search(pattern.format(2), finished[1]) and finished[1].endswith("ETA 0 s"), finished[1]
    assert "ETA" not in done.stdout and "report:" in done.stdout
