"""Cost: calls, tokens and time per sample attempt, kept in the usage ledger across retries."""

from pathlib import Path

import pytest
from _behavior_logs import eval_log, sample, turn
from inspect_ai.event import ModelEvent
from inspect_ai.log import EvalError, write_eval_log
from inspect_ai.model import ChatMessageAssistant, GenerateConfig, ModelOutput, ModelUsage

from forge_eval import ForgeError
from forge_eval.analysis import attempt_cost, cost_summary, record_usage
from forge_eval.rundir import USAGE_LEDGER, read_usage_ledger


def _call(role: str | None, prompt: int, cached: int, completion: int, written: int = 0) -> ModelEvent:
    usage = ModelUsage(
        input_tokens=prompt - cached - written,  # Inspect's input tokens leave the cache out
        output_tokens=completion,
        total_tokens=prompt + completion,
        input_tokens_cache_read=cached or None,
        input_tokens_cache_write=written or None,
    )
    output = ModelOutput.from_message(ChatMessageAssistant(content="ok"))
    output.usage = usage
    return ModelEvent(
        model="m", role=role, input=[], tools=[], tool_choice="auto", config=GenerateConfig(), output=output
    )


def _attempt(task: str, uuid: str, started: str, events: list, error: bool = False, seconds: float = 2.0):
    s = sample(task, [turn(text="done")])
    s.events = events
    s.uuid, s.started_at, s.total_time, s.working_time = uuid, started, seconds, seconds / 2
    if error:
        s.error = EvalError(message="RuntimeError('sandbox died')", traceback="", traceback_ansi="")
    return s


def test_an_attempt_counts_agent_and_role_calls_apart_with_the_prompt_split() -> None:
    events = [_call(None, 100, 60, 10, written=5), _call(None, 50, 0, 7), _call("grader", 30, 0, 3)]
    row = attempt_cost(eval_log([], seed=3, harness="codex"), _attempt("t1", "u1", "s", events, seconds=4.0))
    assert (row["calls"], row["prompt_tokens"], row["cached_tokens"], row["completion_tokens"]) == (
        2,
        150,
        60,
        17,
    )
    assert (row["role_calls"], row["role_tokens"]) == (1, 33)
    assert (row["seed"], row["harness"], row["wall_s"], row["working_s"]) == (3, "codex", 4.0, 2.0)
    assert row["attempt"] == "u1@s" and row["errored"] is False


def test_the_ledger_keeps_retried_attempts_after_their_log_is_gone_and_counts_copies_once(
    tmp_path: Path,
) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    failed = _attempt("t1", "u1", "2026-12-06T08:00:00+00:00", [_call(None, 10, 0, 1)], error=True)
    kept = _attempt("t2", "u2", "2026-12-06T08:00:00+00:00", [_call(None, 20, 0, 2)])
    first = logs / "first.eval"
    write_eval_log(eval_log([failed, kept], seed=0, harness="react"), str(first))
    assert len(record_usage(logs)) == 2
    # the retry: a new log carrying t2 over (same attempt) and t1 run again; Inspect removes the older log
    retried = _attempt(
        "t1", "u1", "2026-12-06T08:05:00+00:00", [_call(None, 10, 0, 1), _call(None, 12, 0, 1)]
    )
    write_eval_log(eval_log([retried, kept], seed=0, harness="react"), str(logs / "second.eval"))
    first.unlink()
    rows = record_usage(logs)
    assert sorted(rows) == [
        "u1@2026-12-06T08:00:00+00:00",
        "u1@2026-12-06T08:05:00+00:00",
        "u2@2026-12-06T08:00:00+00:00",
    ]
    assert read_usage_ledger(logs) == rows and (logs / USAGE_LEDGER).is_file()
    total = cost_summary(rows.values())["total"]
    assert (total["n_attempts"], total["n_trials"], total["n_retried"]) == (3, 2, 1)
    assert (total["calls"], total["prompt_tokens"], total["completion_tokens"]) == (4, 52, 5)
    assert total["per_trial"]["calls"] == 2.0 and total["wall_s"] == 6.0
    # a shard's ledger below the log folder is read too
    shard = logs / "shards" / "s1"
    shard.mkdir(parents=True)
    (shard / USAGE_LEDGER).write_text('{"attempt": "x@1", "task_id": "t9", "seed": 1}\n')
    assert "x@1" in read_usage_ledger(logs)


def test_cost_is_per_harness_and_in_total_and_keeps_only_the_run_seeds() -> None:
    react = attempt_cost(
        eval_log([], seed=0, harness="react"), _attempt("t1", "a", "1", [_call(None, 10, 0, 1)])
    )
    codex = attempt_cost(
        eval_log([], seed=0, harness="codex"), _attempt("t1", "b", "1", [_call(None, 30, 0, 3)])
    )
    other = attempt_cost(
        eval_log([], seed=9, harness="codex"), _attempt("t1", "c", "1", [_call(None, 99, 0, 9)])
    )
    summary = cost_summary([react, codex, other], seeds=[0])
    assert summary["per_harness"]["react"]["prompt_tokens"] == 10
    assert summary["per_harness"]["codex"]["prompt_tokens"] == 30
    assert summary["total"]["prompt_tokens"] == 40 and summary["total"]["n_trials"] == 1


def test_a_damaged_ledger_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / USAGE_LEDGER).write_text("not json\n")
    with pytest.raises(ForgeError, match=f"{USAGE_LEDGER} line 1 is not JSON"):
        read_usage_ledger(tmp_path)
