"""A run killed with SIGKILL mid-way, then resumed with the same command, ends complete."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
from inspect_ai.log import read_eval_log

from tests.runner._recording_server import Hold, recording_server

FORGE = Path(sys.executable).with_name("forge-eval")
# A console script cannot import the test package's probe benchmark; this runs the CLI with it.
_CLI = "import tests.runner._probe_benchmark; from forge_eval._cli.main import main; main()"


def _run_cli(args: list[str], **kw) -> subprocess.Popen:
    env = {**os.environ, "REC_API_KEY": "test", "INSPECT_DISPLAY": "none"}
    root = Path(__file__).resolve().parents[2]
    return subprocess.Popen(
        [sys.executable, "-c", _CLI, "run", *args], cwd=root, env=env, start_new_session=True, **kw
    )


@pytest.mark.slow
def test_kill_9_then_resume_is_complete(tmp_path):
    out = tmp_path / "run"
    hold = Hold(marker="Say 42.")  # the "forty-two" task waits until the process is killed
    with recording_server(hold=hold) as (url, seen):
        args = ["probe", "--seeds", "2", "--epochs", "1", "--model", "openai-api/rec/m"]
        args += ["--model-base-url", url, "--out", str(out)]
        first = _run_cli(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 180
        while (len(hold.held) < 2 or len(seen) < 4) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert len(hold.held) == 2 and len(seen) == 4, (hold.held, seen)
        time.sleep(1.0)  # let Inspect write what it has
        os.killpg(first.pid, signal.SIGKILL)
        first.wait(timeout=30)
        hold.release.set()
        assert list((out / "logs").glob("*.eval")), "the killed run left no logs to resume from"

        second = _run_cli(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        stdout, stderr = second.communicate(timeout=300)
    assert second.returncode == 0, stderr
    results = json.loads((out / "results.json").read_text())
    assert results["status"] == "complete", stdout
    trials = pd.read_csv(out / "trials.csv")
    assert len(trials) == 3 * 2 and trials["error"].isna().all()
    assert results["metrics"]["success_rate"]["estimate"] == 4 / 6
    # the killed attempt's log is still there and unfinished: it must not make the run partial
    statuses = [read_eval_log(str(p), header_only=True).status for p in (out / "logs").glob("*.eval")]
    assert "started" in statuses and statuses.count("success") == 2, statuses
