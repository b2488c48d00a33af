"""Credit variants: which calls learn, Eq. (1) rewards, and the same rollout advantage under all three."""

import numpy as np
import pytest

from forge_eval._errors import UnknownNameError, UsageError
from forge_eval.training.batch import build_batch
from forge_eval.training.credit import CREDIT_VARIANTS, credit_variant
from forge_eval.training.trajectories import build_trajectory
from tests.training.traffic import claude_code_rollout, codex_rollout

VARIANTS = ["broadcast", "masked", "terminal"]


def test_registry_lists_the_three_variants_and_rejects_others():
    assert CREDIT_VARIANTS.names() == VARIANTS
    assert all(CREDIT_VARIANTS.get(n).description for n in VARIANTS)
    with pytest.raises(UnknownNameError, match="broadcast, masked, terminal"):
        credit_variant("everything")
    with pytest.raises(UsageError, match="gamma must be in"):
        credit_variant("broadcast", gamma=1.5)


def test_masks_on_claude_code_traffic():
    rollout, records, roles = claude_code_rollout()
    t = build_trajectory(rollout, records)
    masks = {n: [c.loss_mask for c in credit_variant(n).assign(t, 1.0)] for n in VARIANTS}
    assert masks["broadcast"] == [True] * len(roles)
    assert masks["masked"] == [r in ("action", "answer") for r in roles]
    assert masks["terminal"] == [i == roles.index("answer") for i in range(len(roles))]


def test_eq1_discounted_rewards():
    rollout, records, _ = codex_rollout()
    t = build_trajectory(rollout, records)
    credits = credit_variant("broadcast", gamma=0.5).assign(t, 2.0)
    last = len(credits) - 1
    assert [c.reward for c in credits] == [2.0 * 0.5 ** (last - i) for i in range(len(credits))]
    assert [c.scale for c in credits] == [0.5 ** (last - i) for i in range(len(credits))]


def _group(make, rewards):
    trajectories = []
    for i, reward in enumerate(rewards):
        rollout, records, _ = make(f"r{i}")
        trajectories.append(build_trajectory(rollout.model_copy(update={"reward": reward}), records))
    return trajectories


@pytest.mark.parametrize("merge", [True, False])
def test_same_rollout_advantage_under_all_variants_with_gamma_1(merge):
    """Only *which* tokens learn differs; every trainable token of a rollout has the rollout's advantage."""
    expected = {"r0": 0.5 / np.sqrt(1 / 3), "r1": -0.5 / np.sqrt(1 / 3)}  # rewards 1,0,1,0: +-0.866
    for name in VARIANTS:
        batch = build_batch(
            _group(claude_code_rollout, [1, 0, 1, 0]), credit=credit_variant(name), merge=merge
        )
        values = {}
        for row in batch.rows:
            trained = row.advantages[row.response_mask == 1]
            assert np.allclose(trained, trained[0])
            assert np.all(row.advantages[row.response_mask == 0] == 0)
            values.setdefault(row.rollout_id, []).append(float(trained[0]))
        for rollout_id in ("r0", "r1"):
            assert values[rollout_id] == pytest.approx(
                [expected[rollout_id]] * len(values[rollout_id]), abs=1e-5
            )
    trained = {
        n: sum(
            int(r.response_mask.sum())
            for r in build_batch(
                _group(claude_code_rollout, [1, 0]), credit=credit_variant(n), merge=merge
            ).rows
        )
        for n in VARIANTS
    }
    assert trained["broadcast"] > trained["masked"] > trained["terminal"] > 0


@pytest.mark.parametrize("name", VARIANTS)
def test_last_row_of_every_rollout_is_trainable(name):
    batch = build_batch(_group(claude_code_rollout, [1, 0]), credit=credit_variant(name), merge=True)
    last_rows = {}
    for row in batch.rows:
        last_rows[row.rollout_id] = row
    assert all(row.response_mask.any() for row in last_rows.values())
    assert all(row.roles[-1] in ("action", "answer") or name == "broadcast" for row in last_rows.values())


def test_discounted_advantage_scales_per_call():
    batch = build_batch(
        _group(codex_rollout, [1, 0]), credit=credit_variant("broadcast", gamma=0.5), merge=False
    )
    r0 = [row for row in batch.rows if row.rollout_id == "r0"]
    firsts = [float(row.advantages[row.response_mask == 1][0]) for row in r0]
    a = firsts[-1]
    assert firsts == pytest.approx([a * 0.5 ** (len(r0) - 1 - i) for i in range(len(r0))])
