"""Behavior read from REAL Inspect tool calls: the react harness's bash in a local sandbox.

Hand-built transcripts once named bash's argument `cmd` while Inspect calls it `command`, and Inspect's bash
reports a failed command as plain text, so both self-verification and error recovery were misread. Here the
calls are made by Inspect itself (react + the harness's shell tool, executed in Inspect's local sandbox).
"""

from pathlib import Path

from inspect_ai import Task, eval
from inspect_ai.agent import react
from inspect_ai.dataset import Sample
from inspect_ai.log import EvalLog
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import includes
from inspect_ai.solver import Solver
from inspect_ai.tool import bash

from forge_eval.analysis.behavior import Transcripts, capability_values, read_transcripts, summarize_behavior
from forge_eval.harnesses import HARNESSES


def _call(tool: str, arguments: dict) -> ModelOutput:
    output = ModelOutput.for_tool_call("mockllm/model", tool, arguments)
    output.usage = ModelUsage(input_tokens=10, output_tokens=5, total_tokens=15)  # no tiktoken download
    return output


def _log(tmp_path: Path, solver: Solver, commands: list[str]) -> EvalLog:
    """One sample in Inspect's local sandbox: the model runs `commands` with bash, then submits."""
    outputs = [_call("bash", {"command": c}) for c in commands] + [_call("submit", {"answer": "done"})]
    task = Task(
        dataset=[Sample(id="t1", input="write and check a file", target="done")],
        solver=solver,
        scorer=includes(),
        sandbox="local",
    )
    [log] = eval(
        task,
        model=get_model("mockllm/model", custom_outputs=outputs),
        log_dir=str(tmp_path),
        display="none",
        seed=0,
    )
    assert log.status == "success", log.error
    return log


def _run(tmp_path: Path, commands: list[str]) -> Transcripts:
    solver = HARNESSES.get("react").solver(tools=[bash(timeout=30)], system_prompt="Use bash.")
    return read_transcripts([_log(tmp_path, solver, commands)])


def test_react_bash_writes_then_reads_back_and_a_failed_command_is_seen(tmp_path: Path) -> None:
    work = tmp_path / "w"
    work.mkdir()
    t = _run(tmp_path, [f"echo hi > {work}/a.txt", f"cat {work}/missing.txt", f"cat {work}/a.txt"])
    calls = t.calls
    assert calls["tool"].tolist()[:3] == ["bash"] * 3
    assert calls["access"].tolist()[:3] == ["write", "read", "read"]
    assert calls["error_kind"].tolist()[:3] == ["", "nonzero_exit", ""]
    values = capability_values(t.rollouts, calls).iloc[0]
    assert values["self_verification"] == 100.0
    assert values["error_recovery"] == 100.0  # the failure is seen, and the rollout passed


def test_a_write_that_failed_does_not_count_as_a_write(tmp_path: Path) -> None:
    t = _run(tmp_path, [f"echo hi > {tmp_path}/no/such/dir/a.txt", f"cat {tmp_path}/no/such/dir/a.txt"])
    assert t.calls["error_kind"].tolist()[:2] == ["nonzero_exit", "nonzero_exit"]
    assert t.calls["access"].tolist()[:2] == ["write", "read"]
    # the only write failed: nothing was written, so there is nothing to verify
    assert capability_values(t.rollouts, t.calls)["self_verification"].isna().all()


def test_a_plain_inspect_bash_run_reports_error_recovery_as_not_measurable(tmp_path: Path) -> None:
    """Inspect's own react() with Inspect's own bash(): a failed command reads like any output, so error
    recovery is "not measurable for this log", with the reason, instead of an empty value."""
    log = _log(tmp_path, react(tools=[bash(timeout=30)]), [f"cat {tmp_path}/missing.txt"])
    plain = read_transcripts([log])
    assert plain.calls["error_kind"].tolist()[:1] == [""]  # the failed `cat` left no trace of failing
    assert plain.rollouts["harness_named"].tolist() == [False]
    error_recovery = summarize_behavior(plain, n_resamples=200)["groups"]["overall"]["capabilities"][
        "error_recovery"
    ]
    assert error_recovery["estimate"] is None
    assert error_recovery["not_measurable"].startswith(
        "not measurable for this log: its shell tool's results"
    )
    # the same log, read as a forge-eval react run (whose bash reports exit statuses): measurable, and no
    # rollout had a failed command
    named = read_transcripts([log], harness="react")
    summary = summarize_behavior(named, n_resamples=200)["groups"]["overall"]["capabilities"]
    assert "not_measurable" not in summary["error_recovery"] and summary["error_recovery"]["estimate"] is None
    # other metrics are unaffected
    assert "not_measurable" not in summary["self_verification"]
