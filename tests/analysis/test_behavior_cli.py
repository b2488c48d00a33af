"""`forge-eval analyze DIR --compare DIR2` end to end: behavior.json, the report section, errors."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from _behavior_logs import Call, eval_log, run_dir, sample, turn

from forge_eval.analysis.behavior import BEHAVIOR_FILE, behavior_section

FORGE_EVAL = str(Path(sys.executable).with_name("forge-eval"))
TASKS = ["t1", "t2", "t3"]
SEEDS = (11, 22)


def _shell(cmd: str, code: int, output: str = ""):
    return turn(Call("exec_command", {"cmd": cmd}, f"Process exited with code {code}\n{output}"))


def _run(path: Path, verify: bool, shell_first: bool) -> Path:
    """A Codex-style bridged run: writes a file, reads it back (or not), maybe via the shell only."""
    logs, passed = [], {}
    for seed in SEEDS:
        samples = []
        for task in TASKS:
            turns = [
                turn(Call("exec_command", {"cmd": f"echo {task} > out.txt"}, "Process exited with code 0"))
            ]
            if shell_first:
                turns.append(turn(Call("exec_command", {"cmd": "ls /nope"}, "Process exited with code 2")))
            if verify:
                turns.append(
                    turn(Call("exec_command", {"cmd": "cat out.txt"}, f"Process exited with code 0\n{task}"))
                )
            turns.append(turn(Call("update_plan", {"plan": []}, "ok")))
            turns.append(turn(text="done"))
            samples.append(sample(task, turns, native=False, score=1.0 if verify else 0.0))
            passed[(task, seed, 1)] = verify
        logs.append(eval_log(samples, seed=seed, harness="codex"))
    return run_dir(path, logs, harness="codex", passed=passed)


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([FORGE_EVAL, "analyze", *args], capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def analyzed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess]:
    root = tmp_path_factory.mktemp("runs")
    rl = _run(root / "rl", verify=True, shell_first=False)
    sft = _run(root / "sft", verify=False, shell_first=True)
    done = _cli(str(rl), "--compare", str(sft), "--resamples", "500")
    return rl, done


def test_analyze_writes_behavior_json_with_cis_and_comparison(analyzed) -> None:
    rl, done = analyzed
    assert done.returncode == 0, done.stderr
    data = json.loads((rl / BEHAVIOR_FILE).read_text())
    assert data["harness"] == "codex" and data["benchmark"] == "fixture"
    assert set(data["groups"]) == {"overall", "harness:codex"}
    caps = data["groups"]["overall"]["capabilities"]
    assert caps["self_verification"]["estimate"] == 100.0
    assert caps["self_verification"]["n_tasks"] == 3 and caps["self_verification"]["n_seeds"] == 2
    shares = data["groups"]["overall"]["tool_shares"]
    assert shares["all"]["generic_shell"]["estimate"] == pytest.approx(100 * 2 / 3)
    assert shares["successful"]["exec_command"]["estimate"] == pytest.approx(100 * 2 / 3)
    paired = data["comparison"]["groups"]["overall"]["capabilities"]
    assert paired["self_verification"]["estimate"] == 100.0  # 100 (this run) - 0 (compared run)
    assert paired["self_verification"]["n_cells"] == 6
    shell = data["comparison"]["groups"]["overall"]["tool_shares"]["all"]["generic_shell"]
    assert shell["estimate"] == pytest.approx(100 * (2 / 3 - 2 / 3))
    assert "Self-verification" in done.stdout and "paired differences" in done.stdout


def test_report_gets_a_behavior_section(analyzed) -> None:
    rl, done = analyzed
    page = (rl / "report.html").read_text()
    assert 'id="behavior"' in page
    assert "Generic shell" in page and "<svg" in page
    assert "read one of the written resources back after writing it" in page  # definitions by the numbers
    assert "Compared with" in page
    section = behavior_section(rl)
    assert section is not None and section.title == "Behavior"
    assert behavior_section(rl / "logs") is None  # no behavior.json there
    # `forge-eval report` imports only the reports package: the section comes through its entry point
    (rl / "report.html").unlink()
    rebuilt = subprocess.run([FORGE_EVAL, "report", str(rl)], capture_output=True, text=True, timeout=300)
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert (rl / "report.html").read_text().count('id="behavior"') == 1


def test_errors_are_messages_not_tracebacks(tmp_path: Path) -> None:
    missing = _cli(str(tmp_path / "nope"))
    assert missing.returncode == 2
    assert "does not exist" in missing.stderr and "Traceback" not in missing.stderr
    empty = _cli(str(tmp_path))
    assert empty.returncode == 1
    assert f"no Inspect logs in {tmp_path / 'logs'}" in empty.stderr and "Traceback" not in empty.stderr


def test_a_compared_run_without_logs_is_reported_before_any_work(analyzed, tmp_path: Path) -> None:
    rl, _ = analyzed
    done = _cli(str(rl), "--compare", str(tmp_path), "--resamples", "100")
    assert done.returncode == 1
    assert f"no Inspect logs in {tmp_path / 'logs'}" in done.stderr and "Traceback" not in done.stderr
