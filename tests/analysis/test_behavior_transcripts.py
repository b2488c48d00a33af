"""The transcript reader on hand-built logs (Inspect's own types, written with write_eval_log)."""

import gc
from pathlib import Path

import pytest
from _behavior_logs import Call, eval_log, run_dir, sample, service_metadata, turn

from forge_eval._errors import ForgeError
from forge_eval.analysis.behavior import read_parse_verdicts, read_run_transcripts, read_transcripts
from forge_eval.proxy.records import CallRecord, RolloutRecord


def test_native_and_bridged_logs_give_the_same_calls_and_results(tmp_path: Path) -> None:
    turns = [
        turn(Call("bash", {"command": "echo hi > a.txt"}, "")),
        turn(Call("bash", {"command": "cat a.txt"}, "hi")),
        turn(text="done"),
    ]
    native = read_transcripts([eval_log([sample("t1", turns, native=True)], harness="react")])
    bridged = read_transcripts([eval_log([sample("t1", turns, native=False)], harness="react")])
    for t in (native, bridged):
        assert list(t.calls["tool"]) == ["bash", "bash"]
        assert list(t.calls["result"]) == ["", "hi"]
        assert list(t.calls["access"]) == ["write", "read"]
        assert list(t.calls["writes"]) == [("a.txt",), ()]
        assert list(t.calls["reads"]) == [(), ("a.txt",)]
        assert t.rollouts["n_calls"].tolist() == [2]
        assert t.rollouts["n_turns"].tolist() == [3]
        assert not t.rollouts["ended_malformed"].any()


def test_round_trip_through_an_eval_file(tmp_path: Path) -> None:
    turns = [
        turn(Call("exec_command", {"cmd": "ls -la", "workdir": "/repo"}, "Process exited with code 2\n"))
    ]
    run = run_dir(
        tmp_path, [eval_log([sample("t1", turns, native=False, score=0.0)], seed=7)], harness="codex"
    )
    t = read_run_transcripts(run)
    row = t.calls.iloc[0]
    assert (row.task_id, row.seed, row.epoch, row.harness) == ("t1", 7, 1, "codex")
    assert row.error_kind == "nonzero_exit" and row.failed
    assert row.generic_shell
    assert not t.rollouts["passed"].iloc[0]


def test_error_kinds() -> None:
    turns = [
        turn(
            Call("exec_command", {"cmd": "make"}, "Process exited with code 0\nok"),
            Call("exec_command", {"cmd": "make test"}, "Process exited with code 1\nFAIL"),
            Call("exec_command", {"cmd": "sleep 99"}, "command timed out after 10s"),
            Call("view_image", {"path": "x.png"}, "no such file", error="file_not_found"),
            Call("apply_patch", {"input": "oops"}, "slow", error="timeout"),
            Call("exec_command", {"cmd": "timeout 5 make"}, "Process exited with code 124\n"),
            Call("exec_command", {"cmd": "cat ci.log"}, "Process exited with code 0\njob timed out after 5m"),
            Call("view_image", {"path": "timed out after.png"}, "timed out after"),
        )
    ]
    t = read_transcripts([eval_log([sample("t1", turns, native=False)], harness="codex")])
    kinds = ["", "nonzero_exit", "timeout", "tool_error", "timeout", "timeout", "", ""]
    assert list(t.calls["error_kind"]) == kinds


def test_malformed_calls_by_parse_error_server_marker_and_text() -> None:
    cases = {
        "parse_error": [turn(Call("bash", {}, "", parse_error="bad JSON"))],
        "forge_marker": [turn(text="I will call bash now", forge_parse_failed=True)],
        "hermes_text": [turn(text='<tool_call>{"name": "bash", "arguments": {"command": "ls"</tool_call>')],
        "json_text": [turn(text='{"name": "bash", "arguments": {"command": "ls"}')],
    }
    for name, turns in cases.items():
        t = read_transcripts([eval_log([sample(name, turns)])])
        assert t.rollouts["ended_malformed"].tolist() == [True], name
        assert t.calls["error_kind"].tolist() == ["malformed"], name
    plain = read_transcripts([eval_log([sample("ok", [turn(text="The answer is 42.")])])])
    assert plain.rollouts["ended_malformed"].tolist() == [False]
    assert plain.calls.empty


def test_malformed_turn_followed_by_a_good_one_does_not_end_the_rollout() -> None:
    turns = [turn(text="<tool_call>{oops"), turn(Call("bash", {"command": "ls"}, "a.txt")), turn(text="done")]
    t = read_transcripts([eval_log([sample("t1", turns)])])
    assert t.rollouts["ended_malformed"].tolist() == [False]
    assert t.calls["error_kind"].tolist() == ["malformed", ""]
    assert t.rollouts["n_calls"].tolist() == [1]  # the malformed turn is not a tool call


def test_openclaw_rewritten_ids_and_mcp_prefixes() -> None:
    long_id = "for_tool_call_7943e42a-50e8-4817-87bb-6fb729a986de"  # as seen from a real OpenClaw run
    turns = [
        turn(Call("exec", {"command": "cat notes.md"}, "hello", result_id="call00")),
        turn(Call("mcp__forgelab__mail_read", {"message_id": "m3"}, '{"id": "m3"}')),
        turn(
            Call(
                "exec",
                {"command": "ls"},
                "(Command exited with code 2)",
                call_id=long_id,
                result_id=long_id.replace("_", "").replace("-", "")[:40],
            )
        ),
    ]
    log = eval_log([sample("t1", turns, native=False, metadata=service_metadata("mail"))], harness="openclaw")
    t = read_transcripts([log])
    assert t.calls["result"].tolist() == ["hello", '{"id": "m3"}', "(Command exited with code 2)"]
    assert t.calls["tool"].tolist() == ["exec", "mail_read", "exec"]
    assert t.calls["reads"].tolist() == [("notes.md",), ("@mail:m3",), ()]
    assert t.calls["service"].fillna("").tolist() == ["", "mail", ""]
    assert t.calls["error_kind"].tolist() == ["", "", "nonzero_exit"]


def test_claude_code_tools_and_error_results() -> None:
    turns = [
        turn(Call("Write", {"file_path": "/w/app.py", "content": "x"}, "ok")),
        turn(Call("Bash", {"command": "python /w/app.py"}, "Exit code 1\nTraceback", error="unknown")),
        turn(Call("Read", {"file_path": "/w/app.py"}, "x")),
    ]
    t = read_transcripts([eval_log([sample("t1", turns, native=False)], harness="claude_code")])
    assert t.calls["access"].tolist() == ["write", "other", "read"]
    assert t.calls["error_kind"].tolist() == ["", "nonzero_exit", ""]
    assert t.calls["generic_shell"].tolist() == [False, True, False]


def test_service_creation_is_identified_by_the_id_in_its_result() -> None:
    turns = [
        turn(Call("tickets_create", {"title": "Printer"}, '{"id": "T-9", "title": "Printer"}')),
        turn(Call("tickets_get", {"ticket_id": "T-9"}, "{}")),
        turn(Call("calendar_create_event", {"title": "x"}, '{"event": {"id": "e1"}}')),
    ]
    t = read_transcripts([eval_log([sample("t1", turns, metadata=service_metadata("tickets", "calendar"))])])
    assert t.calls["writes"].tolist() == [("@tickets:T-9",), (), ("@calendar:e1",)]
    assert t.calls["reads"].tolist() == [(), ("@tickets:T-9",), ()]
    # without the specs the sample records, a creation is known by its verb only: its id is not
    unrecorded = {"services": ["tickets", "calendar"]}
    guessed = read_transcripts([eval_log([sample("t1", turns, metadata=unrecorded)])])
    assert guessed.calls["writes"].tolist() == [("@tickets",), (), ("@calendar",)]


def test_unknown_service_tools_are_classified_by_verb() -> None:
    turns = [
        turn(Call("wiki_update", {"page_id": "p1"}, "{}"), Call("wiki_list", {}, "[]"), Call("wiki_frob", {}))
    ]
    t = read_transcripts([eval_log([sample("t1", turns, metadata={"services": ["wiki"]})])])
    assert t.calls["access"].tolist() == ["write", "read", "other"]
    assert t.calls["writes"].tolist()[0] == ("@wiki:p1",)


def test_later_log_replaces_an_earlier_sample_and_trials_csv_decides_passed(tmp_path: Path) -> None:
    first = eval_log([sample("t1", [turn(Call("bash", {"command": "ls"}))], score=0.0)], seed=1)
    second = eval_log([sample("t1", [turn(Call("bash", {"command": "pwd"}))], score=0.0)], seed=1)
    second.eval.created = "2026-11-29T11:00:00+00:00"
    run = run_dir(tmp_path, [first, second], passed={("t1", 1, 1): True})
    t = read_run_transcripts(run)
    assert t.calls["arguments"].tolist() == [{"command": "pwd"}]
    assert t.rollouts["passed"].tolist() == [True]


def test_reading_leaves_the_garbage_collector_as_it_was() -> None:
    log = eval_log([sample("t1", [turn(Call("bash", {"command": "ls"}))])])
    assert gc.isenabled()
    read_transcripts([log])
    assert gc.isenabled()
    gc.disable()
    try:
        read_transcripts([log])
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_missing_logs_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ForgeError, match="no Inspect logs in") as info:
        read_run_transcripts(tmp_path)
    assert "forge-eval run" in (info.value.hint or "")


def _records(root: Path, rollout_id: str, task_id: str, seed: int, verdicts: list[bool]) -> None:
    attempt = root / "records" / rollout_id / "0"
    attempt.mkdir(parents=True)
    rollout = RolloutRecord(rollout_id=rollout_id, task_id=task_id, mode="eval", seed=seed, epoch=1)
    (attempt / "rollout.json").write_text(rollout.model_dump_json())
    lines = []
    for seq, failed in enumerate(verdicts):
        response = {"choices": [], "forge": {"tool_parse": "failed" if failed else "native"}}
        record = CallRecord(
            call_id=f"{rollout_id}-{seq}",
            rollout_id=rollout_id,
            seq=seq,
            api="chat",
            path="/v1/chat/completions",
            original_request={},
            served_request={},
            upstream_response=response,
            t_received=0.0,
        )
        lines.append(record.model_dump_json())
    (attempt / "calls.jsonl").write_text("\n".join(lines) + "\n")


def test_proxy_records_supply_parse_verdicts_inspect_did_not_keep(tmp_path: Path) -> None:
    # the model's last turn is plain text: only the server's marker (kept by the proxy) says it was
    # a tool call that failed to parse
    turns = [turn(Call("bash", {"command": "ls"}, "a")), turn(text="I'll now call the mail tool.")]
    logs = [eval_log([sample("t1", turns), sample("t2", turns)], seed=3)]
    run = run_dir(tmp_path, logs)
    _records(run, "r1", "t1", 3, [False, True])
    _records(run, "r2", "t2", 3, [False])  # one record for two turns: not used
    t = read_run_transcripts(run)
    rollouts = t.rollouts.set_index("task_id")
    assert rollouts["records"].to_dict() == {"t1": "matched", "t2": "mismatched"}
    assert rollouts["ended_malformed"].to_dict() == {"t1": True, "t2": False}
    assert read_parse_verdicts(run / "records") == {("t1", 3, 1): [False, True], ("t2", 3, 1): [False]}


def test_attachment_references_are_resolved() -> None:
    """Inspect's recorder stores long strings once per sample as `attachment://<hash>`."""
    turns = [turn(Call("exec_command", {"cmd": "attachment://c1"}, "attachment://r1")), turn(text="ok")]
    bridged = sample("t1", turns, native=False)
    bridged.attachments = {"c1": "echo hi > a.txt", "r1": "Process exited with code 3\n" + "x" * 500}
    t = read_transcripts([eval_log([bridged], harness="codex")])
    row = t.calls.iloc[0]
    assert row.arguments == {"cmd": "echo hi > a.txt"} and row.writes == ("a.txt",)
    assert row.result.startswith("Process exited with code 3") and row.error_kind == "nonzero_exit"
