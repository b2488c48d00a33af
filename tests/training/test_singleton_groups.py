"""A GRPO group left with one surviving rollout: veRL 0.9.1 trains it on its raw reward, our batch builder
drops it by default; `singletons="raw"` makes the two agree number for number (checked on veRL itself)."""

import numpy as np
import pytest

from forge_eval._errors import UsageError
from forge_eval.training.advantages import GRPO_EPSILON, grpo_advantages
from forge_eval.training.batch import build_batch
from forge_eval.training.credit import credit_variant
from tests.training.test_advantages import _calls_rollout, _verl_v1_advantages

REWARDS = [0.7, 1.0, 0.0, 0.25, 0.5, 0.5]
GROUPS = ["solo", "g", "g", "h", "h", "h"]


def test_a_lone_rollout_is_dropped_by_default_or_gets_its_raw_reward():
    dropped = grpo_advantages(REWARDS, GROUPS)
    assert dropped.advantages[0] is None and dropped.dropped_groups == ["solo"]
    raw = grpo_advantages(REWARDS, GROUPS, singletons="raw")
    assert raw.advantages[0] == pytest.approx(0.7 / (1 + GRPO_EPSILON), rel=1e-12)  # mean 0, std 1
    assert raw.advantages[1:] == dropped.advantages[1:] and raw.groups_dropped == 0
    assert grpo_advantages(REWARDS, GROUPS, singletons="raw", norm_by_std=False).advantages[0] == 0.7
    with pytest.raises(UsageError, match="singletons"):
        grpo_advantages(REWARDS, GROUPS, singletons="keep")  # type: ignore[arg-type]


@pytest.mark.verl
@pytest.mark.parametrize("norm_by_std", [True, False])
def test_verl_gives_a_lone_rollout_its_raw_reward_and_raw_mode_matches(norm_by_std):
    import torch
    from verl.trainer.ppo import core_algos

    token_rewards = torch.zeros(len(REWARDS), 4)
    token_rewards[:, -1] = torch.tensor(REWARDS)
    uids = np.array(GROUPS, dtype=object)
    adv, _ = core_algos.compute_grpo_outcome_advantage(
        token_rewards, torch.ones(len(REWARDS), 4), uids, norm_adv_by_std_in_grpo=norm_by_std
    )
    verl = adv[:, 0].tolist()
    assert verl[0] == pytest.approx(0.7, abs=1e-5)  # the documented veRL behaviour
    ours = grpo_advantages(REWARDS, GROUPS, norm_by_std=norm_by_std, singletons="raw").advantages
    assert ours == pytest.approx(verl, abs=1e-6)


@pytest.mark.verl
def test_a_batch_with_a_lone_rollout_matches_verl_v1_in_raw_mode():
    """Group g2 lost all but one rollout to the failure policy: veRL's V1 trainer, handed our outputs,
    computes the same per-token advantages as build_batch(singletons="raw"); the default leaves it out."""
    trajectories = [_calls_rollout("A", 3, 1.0), _calls_rollout("B", 2, 0.0), _calls_rollout("L", 2, 1.0)]
    trajectories[-1].rollout.group_uid = "g2"
    raw = build_batch(trajectories, credit=credit_variant("broadcast"), singletons="raw")
    verl_adv, _ = _verl_v1_advantages(raw.rows, lambda r: r.group)
    lone = [i for i, r in enumerate(raw.rows) if r.rollout_id == "L"]
    assert lone and all(float(raw.rows[i].advantages.max()) == pytest.approx(1.0, abs=1e-5) for i in lone)
    for i, row in enumerate(raw.rows):
        n = len(row.response_ids)
        assert verl_adv[i, :n].numpy() == pytest.approx(row.advantages, abs=1e-5)
    dropped = build_batch(trajectories, credit=credit_variant("broadcast"))
    assert "L" not in {r.rollout_id for r in dropped.rows} and dropped.stats.groups_dropped == 1
