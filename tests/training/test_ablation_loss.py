"""The CPU trainer's loss is veRL 0.9.1's: `agg_loss` per mode and the vanilla clipped PPO loss, compared
with veRL's own functions on the same tensors (pytest -m verl), and how each mode weighs rows."""

import pytest

torch = pytest.importorskip("torch", reason="torch is installed by scripts/setup.d/40-verl.sh (CI does)")

from forge_eval._errors import UnknownNameError  # noqa: E402
from forge_eval.training.ablation._loss import LOSS_AGGREGATIONS, agg_loss, pg_losses  # noqa: E402

MODES = ["token-mean", "seq-mean-token-mean", "seq-mean-token-sum", "token-sum"]


def _tensors(seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """A loss matrix (rows of different lengths, one row with no trained token, a nan outside the
    mask) and its mask."""
    g = torch.Generator().manual_seed(seed)
    loss = torch.randn(6, 9, generator=g)
    lengths = torch.tensor([9, 4, 1, 0, 7, 3])
    mask = torch.arange(9)[None, :] < lengths[:, None]
    loss[3, 2] = float("nan")  # padding may hold anything; veRL's masked_sum ignores it
    return loss, mask


def test_the_modes_are_veRLs_and_unknown_ones_are_named():
    assert sorted(LOSS_AGGREGATIONS.names()) == sorted(MODES)
    with pytest.raises(UnknownNameError, match="seq-mean-token-sum-norm"):
        agg_loss(*_tensors(0), "seq-mean-token-sum-norm")


def test_each_mode_weighs_rows_as_documented():
    loss = torch.tensor([[1.0, 1.0, 1.0, 1.0], [4.0, 0.0, 0.0, 0.0]])
    mask = torch.tensor([[1, 1, 1, 1], [1, 0, 0, 0]]).bool()
    assert float(agg_loss(loss, mask, "token-mean")) == pytest.approx(8 / 5)
    assert float(agg_loss(loss, mask, "token-sum")) == pytest.approx(8)
    assert float(agg_loss(loss, mask, "seq-mean-token-sum")) == pytest.approx((4 + 4) / 2)
    assert float(agg_loss(loss, mask, "seq-mean-token-mean")) == pytest.approx((1 + 4) / 2)


@pytest.mark.verl
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("mask_dtype", [torch.bool, torch.float32])
def test_agg_loss_is_veRLs_on_the_same_tensors(mode, mask_dtype):
    from verl.trainer.ppo.core_algos import agg_loss as verl_agg_loss

    for seed in range(5):
        loss, mask = _tensors(seed)
        mask = mask.to(mask_dtype)
        ours = agg_loss(loss, mask, mode)
        theirs = verl_agg_loss(loss, mask, mode)
        assert torch.equal(ours, theirs), (mode, seed, ours, theirs)
        # and the gradient, which is what training uses
        leaf = loss.clone().nan_to_num().requires_grad_()
        agg_loss(leaf, mask, mode).backward()
        ours_grad = leaf.grad.clone()
        leaf.grad = None
        verl_agg_loss(leaf, mask, mode).backward()
        assert torch.equal(ours_grad, leaf.grad)


@pytest.mark.verl
@pytest.mark.parametrize("mode", MODES)
def test_the_clipped_policy_loss_is_veRLs_vanilla_loss(mode):
    from omegaconf import OmegaConf
    from verl.trainer.ppo.core_algos import compute_policy_loss_vanilla

    g = torch.Generator().manual_seed(3)
    old = -torch.rand(5, 7, generator=g) * 3
    new = old + torch.randn(5, 7, generator=g) * 0.8  # ratios far outside [0.8, 1.2] and beyond 3
    advantages = torch.randn(5, 1, generator=g).expand(5, 7).contiguous()
    _, mask = _tensors(1)
    mask = mask[:5, :7]
    config = OmegaConf.create(
        {
            "clip_ratio": 0.2,
            "clip_ratio_low": None,
            "clip_ratio_high": None,
            "clip_ratio_c": 3.0,
            "global_batch_info": {},
        }
    )
    theirs, _ = compute_policy_loss_vanilla(old, new, advantages, mask, mode, config)
    ours = agg_loss(pg_losses(new, old, advantages, 0.2), mask, mode)
    assert torch.equal(ours, theirs)


@pytest.mark.verl
@pytest.mark.parametrize("min_lr_ratio", [0.0, 0.1, 1.0])
def test_the_learning_rate_schedule_is_veRLs_cosine_without_warmup(min_lr_ratio):
    from verl.utils.torch_functional import get_cosine_schedule_with_warmup

    from forge_eval.training.ablation._run import cosine_lr

    steps, lr = 25, 2e-3
    optimizer = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=lr)
    schedule = get_cosine_schedule_with_warmup(optimizer, 0, steps, min_lr_ratio=min_lr_ratio)
    for step in range(steps):
        assert cosine_lr(lr, step, steps, min_lr_ratio) == pytest.approx(optimizer.param_groups[0]["lr"])
        optimizer.step()
        schedule.step()
    assert cosine_lr(lr, 0, steps, min_lr_ratio) == lr
    assert cosine_lr(lr, steps, steps, min_lr_ratio) == pytest.approx(lr * min_lr_ratio)
