"""Issue 36's cases, each labelled by construction: tool failures in every harness's own convention,
exit statuses read where the harness writes them (and answers that are not failures), self-verification
beyond read-back, and format robustness as "terminated on a malformed payload"."""

import math

import pytest
from _behavior_logs import Call, eval_log, sample, turn

from forge_eval.analysis.behavior import capability_values, read_transcripts


def _read(turns: list, harness: str, *, native: bool = False, score: float = 1.0):
    t = read_transcripts([eval_log([sample("t", turns, score=score, native=native)], harness=harness)])
    return t, capability_values(t.rollouts, t.calls).iloc[0]


# (harness, failed non-shell call as the harness reports it, a successful call whose text talks of errors)
FAILED_READS = {
    "claude-code": (
        Call("Read", {"file_path": "/w/a.txt"}, "File does not exist.", marked=True),
        Call("Read", {"file_path": "/w/b.txt"}, '{"status": "error", "tool": "read"}'),
    ),
    "openclaw": (
        Call(
            "read",
            {"path": "a.txt"},
            '{\n  "status": "error",\n  "tool": "read",\n  "error": "File not found"\n}',
        ),
        Call("read", {"path": "b.txt"}, "unable to locate image at x: status error"),
    ),
    "codex": (
        Call(
            "view_image", {"path": "a.png"}, "unable to locate image at `/w/a.png`: No such file or directory"
        ),
        Call("view_image", {"path": "b.png"}, 'attached image b.png {"status": "error", "tool": "read"}'),
    ),
}


@pytest.mark.parametrize("harness", sorted(FAILED_READS))
def test_a_failed_non_shell_tool_is_seen_in_each_harness_convention(harness: str) -> None:
    failed, fine = FAILED_READS[harness]
    t, values = _read([turn(failed), turn(fine), turn(text="done")], harness)
    assert t.calls["error_kind"].tolist() == ["tool_error", ""]
    assert t.calls["failed"].tolist() == [True, False]
    assert values["error_recovery"] == 100.0  # a failure was seen, and the task was solved


# (harness, shell tool, argument, a successful command's result that mentions an exit status elsewhere,
#  the same harness's report of a failed command)
SHELL_RESULTS = {
    "react": ("bash", "command", "build.log:\nexit status: 2\nretrying... ok\n", "boom\nexit status: 2"),
    "codex": (
        "exec_command",
        "cmd",
        "Chunk ID: 1\nWall time: 0.1 seconds\nProcess exited with code 0\nOutput:\n"
        "Process exited with code 2\n",
        "Chunk ID: 2\nWall time: 0.1 seconds\nProcess exited with code 2\nOutput:\nboom\n",
    ),
    "claude-code": ("Bash", "command", "ci log\nExit code 2\nthen passed", "Exit code 2\nboom"),
    "openclaw": (
        "exec",
        "command",
        "(Command exited with code 2) was in the log\nok",
        "boom\n\n(Command exited with code 2)",
    ),
}


@pytest.mark.parametrize("harness", sorted(SHELL_RESULTS))
def test_exit_status_is_read_where_the_harness_writes_it(harness: str) -> None:
    tool, arg, quoted, failed = SHELL_RESULTS[harness]
    turns = [turn(Call(tool, {arg: "cat build.log"}, quoted)), turn(Call(tool, {arg: "make"}, failed))]
    t, _ = _read([*turns, turn(text="done")], harness)
    assert t.calls["error_kind"].tolist() == ["", "nonzero_exit"], t.calls["result"].tolist()


@pytest.mark.parametrize(
    ("command", "code", "kind"),
    [
        ("grep -q TODO src/app.py", 1, "answer_exit"),
        ("cd /w && grep -rn needle .", 1, "answer_exit"),
        ("diff expected.txt out.txt", 1, "answer_exit"),
        ("test -f out.txt", 1, "answer_exit"),
        ("git diff --quiet", 1, "answer_exit"),
        ("bash -lc 'grep -q x f'", 1, "answer_exit"),
        ("grep -q x missing.txt", 2, "nonzero_exit"),  # 2: grep could not read the file
        ("grep -q x f && make", 1, "nonzero_exit"),  # the line's status is make's
        ("git diff", 1, "nonzero_exit"),
    ],
)
def test_answer_exits_are_named_and_not_failures(command: str, code: int, kind: str) -> None:
    result = f"Chunk ID: 1\nWall time: 0 seconds\nProcess exited with code {code}\nOutput:\n"
    t, values = _read([turn(Call("exec_command", {"cmd": command}, result)), turn(text="done")], "codex")
    assert t.calls["error_kind"].tolist() == [kind]
    assert t.calls["failed"].tolist() == [kind != "answer_exit"]
    # a rollout whose only "failure" is an answer has nothing to recover from
    assert math.isnan(values["error_recovery"]) == (kind == "answer_exit")


def _bash(command: str, result: str = "", error: str | None = None) -> Call:
    return Call("bash", {"command": command}, result, error=error)


WRITE = _bash("printf x > /w/src/a.py")
FAILED_EDIT = Call(
    "text_editor", {"command": "str_replace", "path": "/w/src/a.py"}, "no match", error="unknown"
)
# name: (turns after the first write, self-verification, read-back)
VERIFICATIONS = {
    "reads back": ([_bash("cat /w/src/a.py", "x")], 100, 100),
    "runs the tests": ([_bash("cd /w && python -m pytest -q", "1 passed")], 100, 0),
    "git diff": ([_bash("git -C /w diff", "+x")], 100, 0),
    "lists the folder": ([_bash("ls /w/src", "a.py")], 100, 100),
    "greps the folder": ([_bash("grep -rn x /w/src", "a.py:1:x")], 100, 100),
    "git status": ([_bash("git status --short", " M src/a.py")], 100, 0),
    "looks elsewhere": ([_bash("ls /etc", "passwd"), _bash("make", "ok")], 0, 0),
    "reads after a failed edit": ([FAILED_EDIT, _bash("cat /w/src/a.py", "x")], 0, 0),
    "tests before the write": (None, 0, 0),
}


@pytest.mark.parametrize("name", sorted(VERIFICATIONS))
def test_self_verification_counts_checks_and_keeps_read_back_apart(name: str) -> None:
    after, verification, read_back = VERIFICATIONS[name]
    steps = [WRITE, *after] if after is not None else [_bash("pytest -q", "ok"), WRITE]
    _, values = _read([*[turn(c) for c in steps], turn(text="done")], "react", native=True)
    assert (values["self_verification"], values["read_back"]) == (verification, read_back)


def test_a_rollout_whose_only_write_failed_has_nothing_to_verify() -> None:
    _, values = _read([turn(FAILED_EDIT), turn(_bash("pytest -q", "ok")), turn(text="done")], "react")
    assert math.isnan(values["self_verification"]) and math.isnan(values["read_back"])


@pytest.mark.parametrize(
    ("text", "robust"),
    [
        ('To call it, send {"name": "mail_send", "arguments": {"to": "a"}}. The answer is 42.', 100.0),
        ("The model should emit <tool_call> tags; the answer is 42.", 100.0),
        ('{"name": "mail_send", "arguments": {"to": "a"', 0.0),
        ('```json\n{"name": "mail_send", "arguments": {}}\n```', 0.0),
        ('<tool_call>{"name": "mail_send"', 0.0),
    ],
)
def test_format_robustness_counts_rollouts_that_ended_on_a_payload(text: str, robust: float) -> None:
    _, values = _read([turn(_bash("ls", "a")), turn(text=text)], "react", native=True)
    assert values["format_robustness"] == robust


def test_a_malformed_turn_the_rollout_recovered_from_is_not_a_termination() -> None:
    turns = [turn(text='<tool_call>{"name": "bash"'), turn(_bash("ls", "a")), turn(text="done: 42")]
    _, values = _read(turns, "react", native=True)
    assert values["format_robustness"] == 100.0
