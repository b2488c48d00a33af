"""Partial-rollout policies: each policy's batch against one computed by hand.

One GRPO group of four rollouts (rewards 1, 0, 1 and a fourth cut short by a timeout) and a second group
of two complete rollouts (rewards 1, 0). Every rollout is one call; its advantage is read off its row.
Hand-computed (unbiased std, veRL's epsilon 1e-6):
  three members 1, 0, 1: mean 2/3, std sqrt(1/3): A = +1/sqrt(3) = 0.5773503, -2/sqrt(3) = -1.1547005
  four members 1, 0, 1, 0: mean 1/2, std sqrt(1/3): A = +-sqrt(3)/2 = +-0.8660254
  two members 1, 0: mean 1/2, std sqrt(1/2): A = +-1/sqrt(2) = +-0.7071068
"""

import numpy as np
import pytest

from forge_eval._errors import UnknownNameError
from forge_eval.training import build_batch, credit_variant, partial_policy
from forge_eval.training.partial import PARTIAL_POLICIES, is_partial
from forge_eval.training.trajectories import Trajectory, build_trajectory
from tests.training.traffic import Conversation, RolloutBuilder

EPS = 1e-6
THIRD, QUARTER, PAIR = np.sqrt(1 / 3), np.sqrt(1 / 3), np.sqrt(1 / 2)


def _rollout(
    rid: str, group: str, reward: float | None, termination: str = "completed", **record
) -> Trajectory:
    builder = RolloutBuilder(rid, "codex", "chat", "/v1/chat/completions")
    conv = Conversation(builder.tok)
    conv.add("user", f"task {group}")
    builder.call(conv, tool="exec_command", args={"cmd": "ls"}, tools=["exec_command"])
    record = builder.rollout(group_uid=group, reward=reward, termination=termination, **record)
    return build_trajectory(record, builder.records)


def _batch_of(policy: str, **options):
    rollouts = [
        _rollout("r0", "g0", 1.0),
        _rollout("r1", "g0", 0.0),
        _rollout("r2", "g0", 1.0),
        _rollout("p3", "g0", None, "timeout"),
        _rollout("q0", "g1", 1.0),
        _rollout("q1", "g1", 0.0),
    ]
    return build_batch(
        rollouts, credit=credit_variant("broadcast"), partial=partial_policy(policy, **options)
    )


def _advantages(batch) -> dict[str, float]:
    out = {}
    for row in batch.rows:
        values = set(row.advantages[row.response_mask == 1].tolist())
        assert len(values) == 1, row.rollout_id
        out[row.rollout_id] = values.pop()
    return out


TWO = {"q0": 0.5 / (PAIR + EPS), "q1": -0.5 / (PAIR + EPS)}
EXPECTED = {
    "discard": {"r0": (1 / 3) / (THIRD + EPS), "r1": (-2 / 3) / (THIRD + EPS), "r2": (1 / 3) / (THIRD + EPS)}
    | TWO,
    "zero": {r: s * 0.5 / (QUARTER + EPS) for r, s in (("r0", 1), ("r1", -1), ("r2", 1), ("p3", -1))} | TWO,
    "mask": {r: s * 0.5 / (QUARTER + EPS) for r, s in (("r0", 1), ("r1", -1), ("r2", 1))} | TWO,
    "carry": {"r0": (1 / 3) / (THIRD + EPS), "r1": (-2 / 3) / (THIRD + EPS), "r2": (1 / 3) / (THIRD + EPS)}
    | TWO,  # nothing can resume the timed-out rollout here: carry falls back to discard
}


@pytest.mark.parametrize("policy", ["discard", "zero", "mask", "carry"])
def test_each_policys_batch_matches_the_hand_computed_one(policy):
    batch = _batch_of(policy)
    got = _advantages(batch)
    assert set(got) == set(EXPECTED[policy])
    for rid, value in EXPECTED[policy].items():
        assert got[rid] == pytest.approx(value, rel=1e-6), rid
    # literal values, so a change of formula shows even where both sides above would move together
    assert got["r0"] == pytest.approx({"zero": 0.8660254, "mask": 0.8660254}.get(policy, 0.5773503), rel=1e-5)
    rewards = {r.rollout_id: r.reward for r in batch.rows}
    assert rewards.get("p3") == (0.0 if policy == "zero" else None)
    p = batch.stats.partial
    assert (p.policy, p.partial, dict(p.reasons)) == (policy, 1, {"timeout": 1})
    assert dict(p.actions) == {"carry": {"discard": 1}}.get(policy, {policy: 1})
    lost = policy in ("discard", "carry")
    assert (p.groups_short, p.members_lost) == ((1, 1) if lost else (0, 0))
    assert batch.stats.discards.discarded == int(lost)
    assert batch.carried == [] and batch.held == []


def test_mask_keeps_the_prefix_in_the_baseline_but_gives_it_no_row():
    batch = _batch_of("mask")
    assert "p3" not in {r.rollout_id for r in batch.rows}
    assert batch.stats.rows == 5 and batch.stats.groups_kept == 2


def test_carry_holds_the_group_back_when_the_rollout_can_be_resumed():
    batch = _batch_of("carry", resumable=lambda t: t.rollout.rollout_id == "p3")
    assert _advantages(batch) == pytest.approx(TWO, rel=1e-6)  # g0 waits; g1 trains as usual
    assert [t.rollout.rollout_id for t in batch.carried] == ["p3"]
    assert sorted(t.rollout.rollout_id for t in batch.held) == ["r0", "r1", "r2"]
    p = batch.stats.partial
    assert (dict(p.actions), p.held, p.groups_short, batch.stats.discards.discarded) == (
        {"carry": 1},
        3,
        0,
        0,
    )


def test_only_rollouts_cut_short_are_partial():
    crash = _rollout("c", "g", None, "harness_crash")
    answered = _rollout("a", "g", None, "harness_crash", answer="42")
    aborted = _rollout("x", "g", None, "aborted")
    mixed = _rollout("m", "g", None, "timeout", policy_versions=[1, 2])
    mixed.policy_versions = {1, 2}
    assert is_partial(crash) and is_partial(_rollout("t", "g", None, "timeout"))
    assert not is_partial(aborted) and not is_partial(mixed)
    assert not is_partial(answered)  # a crash after an answer is not cut short: it lacks only a reward
    batch = build_batch(
        [crash, aborted, mixed, _rollout("ok", "g", 1.0)],
        credit=credit_variant("broadcast"),
        partial=partial_policy("zero"),
        singletons="raw",
    )
    assert {r.rollout_id for r in batch.rows} == {"c", "ok"}
    assert dict(batch.stats.discards.reasons) == {"aborted_generation": 1, "timeout": 1}


def test_unknown_policy_names_the_valid_ones():
    with pytest.raises(UnknownNameError, match="carry, discard, mask, zero"):
        partial_policy("keep")
    assert PARTIAL_POLICIES.names() == ["carry", "discard", "mask", "zero"]
