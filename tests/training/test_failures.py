"""Failure policy: every discard has a reason; recovered errors and context-length endings are kept."""

import pytest

from forge_eval.proxy.records import UpstreamFailure
from forge_eval.training.batch import build_batch
from forge_eval.training.credit import credit_variant
from forge_eval.training.failures import discard_reason
from forge_eval.training.trajectories import build_trajectory
from tests.training.traffic import Conversation, RolloutBuilder


def _rollout(n_calls: int = 3, rollout_id: str = "r", **fields):
    b = RolloutBuilder(rollout_id, "react", "chat", "/v1/chat/completions")
    conv = Conversation(b.tok)
    conv.add("system", "agent")
    conv.add("user", "task")
    for i in range(n_calls - 1):
        b.call(conv, tools=["bash"], tool="bash", args={"cmd": str(i)})
        conv.add("tool", "ok")
    b.call(conv, tools=["bash"], response="answer")
    return b, b.rollout(**fields)


def _failed_call(b: RolloutBuilder, kind: str):
    last = b.records[-1]
    return last.model_copy(
        update={
            "call_id": "err",
            "seq": last.seq + 1,
            "completion_token_ids": None,
            "error_kind": kind,
            "http_status": 400 if kind == "context_length" else 502,
        }
    )


@pytest.mark.parametrize(
    ("fields", "reason"),
    [
        ({"termination": "timeout"}, "timeout"),
        ({"termination": "oom"}, "oom"),
        ({"termination": "evicted"}, "evicted"),
        ({"termination": "harness_crash", "answer": None}, None),  # the last call is a text answer
        ({"termination": "proxy_terminal_error"}, "terminal_upstream_error"),
        ({"termination": "aborted"}, "aborted_generation"),
        ({"termination": "running"}, "unfinished"),
        ({"reward": None}, "no_reward"),
        ({"discard": True, "discard_reason": "operator"}, "operator"),
        ({}, None),
    ],
)
def test_rollout_level_reasons(fields, reason):
    b, rollout = _rollout(**fields)
    assert discard_reason(build_trajectory(rollout, b.records)) == reason


def test_crash_without_answer_is_discarded():
    b, rollout = _rollout(termination="harness_crash")
    b.records.pop()  # the crash happened before the final answer
    assert discard_reason(build_trajectory(rollout, b.records)) == "harness_crash_without_answer"


def test_terminal_upstream_error_discarded_but_context_length_kept():
    b, rollout = _rollout()
    assert (
        discard_reason(build_trajectory(rollout, [*b.records, _failed_call(b, "http_5xx")]))
        == "terminal_upstream_error"
    )
    assert discard_reason(build_trajectory(rollout, [*b.records, _failed_call(b, "context_length")])) is None


def test_recovered_mid_run_errors_are_kept():
    b, rollout = _rollout()
    failure = UpstreamFailure(kind="http_5xx", http_status=503, at=1.0, call_seq=1)
    b.records[1] = b.records[1].model_copy(update={"retry_count": 2, "upstream_failures": [failure] * 2})
    mid = _failed_call(b, "transport").model_copy(update={"seq": 1})
    records = [b.records[0], mid, *[r.model_copy(update={"seq": r.seq + 1}) for r in b.records[1:]]]
    assert discard_reason(build_trajectory(rollout, records)) is None


def test_aborted_generation_and_mixed_versions():
    b, rollout = _rollout()
    aborted = [*b.records[:-1], b.records[-1].model_copy(update={"finish_reason": "abort"})]
    assert discard_reason(build_trajectory(rollout, aborted)) == "aborted_generation"
    mixed = [*b.records[:-1], b.records[-1].model_copy(update={"policy_version": 4})]
    assert discard_reason(build_trajectory(rollout, mixed)) == "mixed_policy_versions"


def test_discard_rate_against_episode_length_in_the_batch():
    trajectories = []
    for i, (n, termination) in enumerate(
        [
            (2, "completed"),
            (3, "completed"),
            (20, "timeout"),
            (20, "completed"),
            (40, "timeout"),
            (40, "timeout"),
        ]
    ):
        b, rollout = _rollout(n, f"r{i}", termination=termination, reward=float(i % 2))
        trajectories.append(build_trajectory(rollout, b.records))
    batch = build_batch(trajectories, credit=credit_variant("masked"))
    report = batch.stats.discards
    assert (report.rollouts, report.discarded, report.reasons["timeout"]) == (6, 3, 3)
    assert report.rows() == [
        {"calls": "0-4", "rollouts": 2, "discarded": 0, "rate": 0.0, "reasons": {}},
        {"calls": "17-32", "rollouts": 2, "discarded": 1, "rate": 0.5, "reasons": {"timeout": 1}},
        {"calls": "33-64", "rollouts": 2, "discarded": 2, "rate": 1.0, "reasons": {"timeout": 2}},
    ]
    assert batch.stats.groups_kept == 1 and {r.rollout_id for r in batch.rows} == {"r0", "r1", "r3"}
