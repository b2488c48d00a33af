"""Batch rows: merged chains keep engine tokens, interstitials are masked, stats are complete."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from forge_eval.training.batch import build_batch
from forge_eval.training.credit import credit_variant
from forge_eval.training.trajectories import build_trajectory
from tests.training.traffic import Conversation, RolloutBuilder, claude_code_rollout, codex_rollout


def _pair(make):
    out = []
    for i, reward in enumerate([1.0, 0.0]):
        rollout, records, _ = make(f"r{i}")
        out.append((build_trajectory(rollout.model_copy(update={"reward": reward}), records), records))
    return out


def test_merged_row_is_first_prompt_then_responses_and_gaps():
    (t, records), other = _pair(codex_rollout)
    batch = build_batch([t, other[0]], credit=credit_variant("broadcast"), merge=True)
    row = next(r for r in batch.rows if r.rollout_id == "r0" and len(r.call_ids) > 1)
    chain = [records[i] for i in t.chains[0]]
    assert row.call_ids == tuple(r.call_id for r in chain)
    assert row.prompt_ids.tolist() == chain[0].prompt_token_ids
    full = chain[-1].prompt_token_ids + chain[-1].completion_token_ids
    assert np.concatenate([row.prompt_ids, row.response_ids]).tolist() == full
    sampled = np.concatenate([r.completion_token_ids for r in chain])
    assert row.response_ids[row.response_mask == 1].tolist() == sampled.tolist()
    assert (
        row.logprobs[row.response_mask == 1].tolist()
        == np.concatenate([np.float32(r.completion_logprobs) for r in chain]).tolist()
    )
    assert np.all(row.logprobs[row.response_mask == 0] == 0)


def test_unmerged_rows_are_the_recorded_calls():
    pairs = _pair(claude_code_rollout)
    batch = build_batch([t for t, _ in pairs], credit=credit_variant("broadcast"), merge=False)
    records = {r.call_id: r for _, rs in pairs for r in rs}
    assert len(batch.rows) == sum(len(rs) for _, rs in pairs)
    for row in batch.rows:
        (call_id,) = row.call_ids
        assert row.prompt_ids.tolist() == records[call_id].prompt_token_ids
        assert row.response_ids.tolist() == records[call_id].completion_token_ids
        assert row.response_mask.all()


def test_masked_rows_are_left_out_and_counted():
    pairs = _pair(claude_code_rollout)
    batch = build_batch([t for t, _ in pairs], credit=credit_variant("masked"), merge=True)
    # per rollout: title chain and subagent chain carry no loss; main chain and post-compaction chain do
    assert batch.stats.masked_rows_left_out == 4 and batch.stats.rows == 4
    assert all(set(r.roles) & {"action", "answer"} for r in batch.rows)
    s = batch.stats
    assert (s.rollouts, s.groups_kept, s.merge.n_calls, s.merge.merged) == (2, 1, 16, 8)
    assert s.trainable_tokens == sum(int(r.response_mask.sum()) for r in batch.rows)


def test_singleton_group_is_dropped_not_given_its_raw_reward():
    (t, _), _ = _pair(codex_rollout)
    batch = build_batch([t], credit=credit_variant("broadcast"))
    assert batch.rows == []
    assert (batch.stats.groups_dropped, batch.stats.rollouts_in_dropped_groups) == (1, 1)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 2), st.integers(1, 6), st.integers(0, 5)), min_size=1, max_size=12),
    st.sampled_from(["broadcast", "masked", "terminal"]),
)
def test_rows_cover_every_sampled_token_exactly_once(turns, variant):
    """Random multi-agent traffic: each (agent, response length, observation length) turn is one call."""
    b = RolloutBuilder("r0", "react", "chat", "/v1/chat/completions")
    agents = []
    for agent in range(3):
        conv = Conversation(b.tok)
        conv.add("system", f"agent {agent}")
        conv.add("user", "task")
        agents.append(conv)
    for agent, n_response, n_observation in turns:
        words = " ".join(f"w{agent}x{i}" for i in range(n_response))
        b.call(agents[agent], tools=["bash"], response=words)
        agents[agent].add("tool", " ".join("obs" for _ in range(n_observation)) or "-")
    records = b.records
    rollouts = [build_trajectory(b.rollout(reward=1.0), records)]
    rollouts.append(build_trajectory(b.rollout(rollout_id="r1", reward=0.0), records))
    for merge in (True, False):
        batch = build_batch(rollouts, credit=credit_variant(variant), merge=merge)
        rows = [r for r in batch.rows if r.rollout_id == "r0"]
        t = rollouts[0]
        learned = [c for c, m in zip(t.calls, credit_variant(variant).loss_mask(t), strict=True) if m]
        assert sorted(c for r in rows for c in r.call_ids if c in {x.call_id for x in learned}) == sorted(
            c.call_id for c in learned
        )
        by_id = {r.call_id: r for r in records}
        for row in rows:
            last = by_id[row.call_ids[-1]]
            full = np.concatenate([row.prompt_ids, row.response_ids]).tolist()
            assert full == last.prompt_token_ids + last.completion_token_ids
            trained = [by_id[c] for c in row.call_ids if c in {x.call_id for x in learned}]
            assert row.response_ids[row.response_mask == 1].tolist() == [
                tok for r in trained for tok in r.completion_token_ids
            ]
        assert rows and rows[-1].response_mask.any()
    assert t.stats.merged == len(records) - t.stats.n_chains and t.stats.breaks == 0
