"""Trajectory reconstruction and role tagging on harness-shaped traffic."""

import pytest

from forge_eval._errors import ForgeError
from forge_eval.training.trajectories import build_trajectory, read_rollout_jsonl
from tests.training.traffic import (
    ROLE_IDS,
    Conversation,
    RolloutBuilder,
    claude_code_rollout,
    codex_rollout,
    openclaw_rollout,
)

HARNESS_ROLLOUTS = [claude_code_rollout, codex_rollout, openclaw_rollout]


@pytest.mark.parametrize("make", HARNESS_ROLLOUTS, ids=lambda f: f.__name__)
def test_roles_on_harness_traffic(make):
    rollout, records, expected = make()
    assert build_trajectory(rollout, records).roles == expected


def test_claude_code_chains_follow_exact_token_prefixes():
    rollout, records, _ = claude_code_rollout()
    t = build_trajectory(rollout, records)
    # title | main agent (incl. the compaction call that extends it) | subagent | post-compaction restart
    assert t.chains == [[0], [1, 2, 5, 6], [3, 4], [7]]
    assert (t.stats.merged, t.stats.breaks, t.stats.n_chains) == (4, 0, 4)
    assert t.stats.merge_rate == 1.0


def test_calls_are_ordered_by_seq_and_keep_engine_tokens():
    rollout, records, _ = codex_rollout()
    t = build_trajectory(rollout, list(reversed(records)))
    assert [c.seq for c in t.calls] == sorted(r.seq for r in records)
    for call, record in zip(t.calls, records, strict=True):
        assert call.response_ids.tolist() == record.completion_token_ids
        assert call.prompt_ids.tolist() == record.prompt_token_ids


def _two_turns(rerender: bool) -> RolloutBuilder:
    b = RolloutBuilder("r", "react", "chat", "/v1/chat/completions")
    conv = Conversation(b.tok)
    conv.add("system", "solve it")
    conv.add("user", "task")
    b.call(conv, tools=["bash"], tool="bash", args={"cmd": "ls"})
    if rerender:  # the harness re-serialized the tool call: same text, other token ids
        n = len(b.records[0].completion_token_ids)
        conv.tokens[-n:] = [t + 1 for t in conv.tokens[-n:]]
    conv.add("tool", "a.txt")
    b.call(conv, tools=["bash"], response="done")
    return b


def test_merge_break_is_counted_and_starts_a_chain():
    b = _two_turns(rerender=True)
    t = build_trajectory(b.rollout(), b.records)
    assert t.chains == [[0], [1]]
    assert (t.stats.merged, t.stats.breaks, t.stats.merge_rate) == (0, 1, 0.0)
    ok = build_trajectory(b.rollout(), _two_turns(rerender=False).records)
    assert ok.chains == [[0, 1]] and ok.stats.breaks == 0


def test_retried_disconnected_and_tokenless_calls_are_dropped():
    b = _two_turns(rerender=False)
    first, second = b.records
    retry = first.model_copy(update={"call_id": "retry", "seq": 2, "retry_of": first.call_id})
    gone = second.model_copy(update={"call_id": "gone", "seq": 3, "client_disconnected": True})
    failed = second.model_copy(
        update={"call_id": "failed", "seq": 4, "completion_token_ids": None, "error_kind": "http_5xx"}
    )
    t = build_trajectory(b.rollout(), [first, second, retry, gone, failed])
    assert [c.call_id for c in t.calls] == [second.call_id, "retry"]
    s = t.stats
    assert (s.dropped_retried, s.dropped_disconnected, s.dropped_no_tokens) == (1, 1, 1)
    assert t.last_error == "http_5xx" and t.error_calls == 1


def test_logprob_count_mismatch_is_a_clear_error():
    b = _two_turns(rerender=False)
    bad = b.records[0].model_copy(update={"completion_logprobs": [-0.1]})
    with pytest.raises(ForgeError, match="1 logprobs for"):
        build_trajectory(b.rollout(), [bad])


def test_jsonl_round_trip_and_bad_line(tmp_path):
    _, records, _ = openclaw_rollout()
    path = tmp_path / "oc-1.jsonl"
    path.write_text("".join(r.model_dump_json() + "\n" for r in records))
    assert read_rollout_jsonl(path) == records
    path.write_text(records[0].model_dump_json() + "\n{not json\n")
    with pytest.raises(ForgeError, match=r"oc-1.jsonl:2: not a call record"):
        read_rollout_jsonl(path)


def test_prompt_ends_with_generation_prompt_like_a_chat_template():
    _, records, _ = openclaw_rollout()
    assert all(r.prompt_token_ids[-1] == ROLE_IDS["assistant"] for r in records)


def test_claude_code_subagent_on_another_model_alias():
    """Claude Code runs some subagents (Explore) on its small model: same tools, other alias."""
    b = RolloutBuilder("r", "claude_code", "anthropic_messages", "/v1/messages")
    main = Conversation(b.tok)
    main.add("system", "You are Claude Code.")
    main.add("user", "find the config")
    b.call(main, tools=["Agent", "Bash"], alias="claude-opus-4-8", tool="Agent", args={"prompt": "search"})
    explore = Conversation(b.tok)
    explore.add("system", "You are Claude Code.")
    explore.add("user", "search")
    b.call(explore, tools=["Agent", "Bash"], alias="claude-haiku-4-5", tool="Bash", args={"command": "ls"})
    main.add("tool", "config.toml")
    b.call(main, tools=["Agent", "Bash"], alias="claude-opus-4-8", response="It is config.toml.")
    assert build_trajectory(b.rollout(), b.records).roles == ["action", "subagent", "answer"]
