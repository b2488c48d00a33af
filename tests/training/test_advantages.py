"""GRPO advantages: known values, group dropping, and agreement with veRL 0.9.1 itself."""

import statistics

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from forge_eval._errors import UsageError
from forge_eval.training.advantages import grpo_advantages
from forge_eval.training.batch import build_batch
from forge_eval.training.credit import credit_variant
from forge_eval.training.trajectories import build_trajectory
from tests.training.traffic import Conversation, RolloutBuilder, claude_code_rollout


def test_known_values_unbiased_std_and_dr_grpo():
    a = 0.866025  # unbiased std; the population std would give 1.0
    assert grpo_advantages([1, 0, 0, 1], ["g"] * 4).advantages == pytest.approx([a, -a, -a, a], abs=1e-5)
    assert grpo_advantages([1, 0, 0, 1], ["g"] * 4, norm_by_std=False).advantages == [0.5, -0.5, -0.5, 0.5]
    assert grpo_advantages([0.3, 0.3], ["g"] * 2).advantages == [0.0, 0.0]


def test_groups_below_two_survivors_are_dropped_and_counted():
    result = grpo_advantages([1.0, 0.0, 1.0], ["a", "a", "b"])
    assert result.advantages[2] is None
    assert (result.groups_kept, result.groups_dropped, result.rollouts_dropped) == (1, 1, 1)
    assert result.dropped_groups == ["b"]
    with pytest.raises(UsageError, match="at least 2"):
        grpo_advantages([1.0], ["a"], min_group_size=1)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.floats(-5, 5, allow_nan=False), min_size=2, max_size=6), min_size=1, max_size=5))
def test_matches_an_independent_statistics_reference(groups):
    rewards = [r for g in groups for r in g]
    ids = [i for i, g in enumerate(groups) for _ in g]
    got = grpo_advantages(rewards, ids).advantages
    want = [(r - statistics.fmean(g)) / (statistics.stdev(g) + 1e-6) for g in groups for r in g]
    assert got == pytest.approx(want, rel=1e-6, abs=1e-6)


def _calls_rollout(rollout_id: str, n_calls: int, reward: float):
    b = RolloutBuilder(rollout_id, "react", "chat", "/v1/chat/completions")
    conv = Conversation(b.tok)
    conv.add("system", "agent")
    conv.add("user", "task")
    for i in range(n_calls - 1):
        b.call(conv, tools=["bash"], tool="bash", args={"cmd": f"step {i}"})
        conv.add("tool", f"out {i}")
    b.call(conv, tools=["bash"], response="final")
    return build_trajectory(b.rollout(reward=reward, group_uid="g"), b.records)


def test_rollout_level_grpo_has_no_row_count_bias():
    """A: 4 calls r=1, B: 1 call r=0. Row-level GRPO would give +0.447 / -1.789; rollout-level +-0.7071."""
    batch = build_batch(
        [_calls_rollout("A", 4, 1.0), _calls_rollout("B", 1, 0.0)],
        credit=credit_variant("broadcast"),
        merge=False,
    )
    by = {}
    for row in batch.rows:
        by.setdefault(row.rollout_id, []).append(float(row.advantages[row.response_mask == 1][0]))
    assert by["A"] == pytest.approx([0.70710] * 4, abs=1e-4)
    assert by["B"] == pytest.approx([-0.70710], abs=1e-4)


def test_per_rollout_loss_normalisation_weighs_rollouts_equally():
    trajectories = [_calls_rollout("A", 4, 1.0), _calls_rollout("B", 1, 0.0)]
    for loss_norm, expected in (("rollout", {"A": 1.0, "B": 1.0}), ("token", None)):
        batch = build_batch(
            trajectories, credit=credit_variant("broadcast"), merge=False, loss_norm=loss_norm
        )
        totals = {}
        for row in batch.rows:
            totals[row.rollout_id] = totals.get(row.rollout_id, 0.0) + float(row.loss_weights.sum())
        if expected:
            assert totals == pytest.approx(expected)
        else:
            assert totals["A"] > 3 * totals["B"]


# ---- agreement with veRL 0.9.1 (pytest -m verl) ------------------------------------------------------------


@pytest.mark.verl
@settings(max_examples=25, deadline=None)
@given(
    st.lists(
        st.lists(st.sampled_from([0.0, 0.25, 0.5, 1.0]), min_size=2, max_size=5), min_size=1, max_size=4
    ),
    st.booleans(),
)
def test_matches_verl_compute_grpo_outcome_advantage(groups, norm_by_std):
    import torch
    from verl.trainer.ppo import core_algos

    rewards = [r for g in groups for r in g]
    uids = np.array([f"u{i}" for i, g in enumerate(groups) for _ in g], dtype=object)
    token_rewards = torch.zeros(len(rewards), 6)
    token_rewards[:, -1] = torch.tensor(rewards)
    adv, _ = core_algos.compute_grpo_outcome_advantage(
        token_rewards, torch.ones(len(rewards), 6), uids, norm_adv_by_std_in_grpo=norm_by_std
    )
    ours = grpo_advantages(rewards, list(uids), norm_by_std=norm_by_std).advantages
    assert ours == pytest.approx(adv[:, 0].tolist(), abs=1e-5)


def _verl_v1_advantages(rows, uid_of):
    """Run veRL's V1 multi-output advantage on our rows, keyed `{uid}_{session}_{index}` as V1 keys them."""
    import torch
    from tensordict import TensorDict
    from verl.protocol import DataProto
    from verl.trainer.ppo.core_algos import AdvantageEstimator
    from verl.trainer.ppo.v1.utils import compute_advantage_for_multi_trajectories

    width = max(len(r.response_ids) for r in rows)
    mask = torch.zeros(len(rows), width, dtype=torch.int64)
    scores = torch.zeros(len(rows), width)
    keys, index = [], {}
    for i, row in enumerate(rows):
        n = len(row.response_ids)
        mask[i, :n] = torch.from_numpy(row.response_mask.astype(np.int64))
        scores[i, n - 1] = row.reward  # AgentLoopOutput.as_dict: the score sits at the last response position
        k = index[row.rollout_id] = index.get(row.rollout_id, -1) + 1
        keys.append(f"{uid_of(row)}_{row.rollout_id}_{k}")
    data = DataProto(
        batch=TensorDict({"response_mask": mask, "token_level_rewards": scores}, batch_size=len(rows)),
        non_tensor_batch={"uid": np.array([uid_of(r) for r in rows], dtype=object)},
    )
    out = compute_advantage_for_multi_trajectories(data, keys, AdvantageEstimator.GRPO)
    return out.batch["advantages"], mask


@pytest.mark.verl
@pytest.mark.parametrize("variant", ["broadcast", "masked", "terminal"])
@pytest.mark.parametrize("merge", [True, False])
def test_batch_matches_verl_v1_multi_output_advantages(variant, merge):
    """Our per-token advantages equal what veRL's V1 trainer computes from the outputs we hand it."""
    trajectories = []
    for i, reward in enumerate([1.0, 0.0, 1.0, 0.5]):
        rollout, records, _ = claude_code_rollout(f"cc{i}")
        trajectories.append(build_trajectory(rollout.model_copy(update={"reward": reward}), records))
    trajectories += [_calls_rollout("A", 4, 1.0), _calls_rollout("B", 1, 0.0)]
    for t in trajectories[-2:]:
        t.rollout.group_uid = "g2"
    batch = build_batch(trajectories, credit=credit_variant(variant), merge=merge)
    verl_adv, mask = _verl_v1_advantages(batch.rows, lambda r: r.group)
    for i, row in enumerate(batch.rows):
        n = len(row.response_ids)
        assert verl_adv[i, :n].numpy() == pytest.approx(row.advantages, abs=1e-5)
        assert mask[i, :n].sum() > 0


@pytest.mark.verl
def test_why_the_last_output_must_be_trainable():
    """Pitfall 1, checked on veRL itself: a masked last output zeroes its whole rollout's advantage."""
    batch = build_batch(
        [_calls_rollout("A", 3, 1.0), _calls_rollout("B", 2, 0.0)],
        credit=credit_variant("masked"),
        merge=False,
    )
    a_rows = [r for r in batch.rows if r.rollout_id == "A"]
    masked_last = a_rows[0].__class__(
        **{
            **{f: getattr(a_rows[-1], f) for f in a_rows[-1].__slots__},
            "response_mask": np.zeros_like(a_rows[-1].response_mask),
        }
    )
    rows = [*a_rows, masked_last, *[r for r in batch.rows if r.rollout_id == "B"]]
    verl_adv, _ = _verl_v1_advantages(rows, lambda r: r.group)
    assert float(verl_adv[: len(a_rows)].abs().sum()) == 0.0  # every row of A lost its advantage
    ours, _ = _verl_v1_advantages(batch.rows, lambda r: r.group)
    assert float(ours[: len(a_rows)].abs().sum()) > 0
