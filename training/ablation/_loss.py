"""The policy loss of the CPU trainer: veRL 0.9.1's vanilla PPO loss and its loss aggregation modes.

`agg_loss` reduces a (rows, response length) matrix of per-token losses to the scalar that is
differentiated, as `verl.trainer.ppo.core_algos.agg_loss` does with one data-parallel rank and no
global batch information (the trainer's call on one mini-batch): the same formulas, in the same order
of operations, so the result is the same tensor (tested against veRL). Written here rather than imported
because importing veRL takes seconds and pulls Ray into every training process, and the ablation runs
with PyTorch alone. A row is one model call (the rows veRL's agent loop hands the trainer).

- token-mean: every trained token weighs the same (veRL's default).
- seq-mean-token-mean: every row weighs the same, its tokens share its weight.
- seq-mean-token-sum: every row weighs the same, every token of it fully.
- token-sum: the plain sum: a row's gradient does not shrink when other rows or tokens are added.
"""

from collections.abc import Callable
from typing import TYPE_CHECKING

from forge_eval._registry import Registry

if TYPE_CHECKING:
    import torch

Aggregation = Callable[["torch.Tensor", "torch.Tensor"], "torch.Tensor"]
LOSS_AGGREGATIONS: Registry[Aggregation] = Registry("loss aggregation mode")
DEFAULT_LOSS_AGG = "token-mean"
CLIP_RATIO_C = 3.0  # veRL's dual-clip bound on the ratio for negative advantages (clip_ratio_c)


def _masked_sum(values: "torch.Tensor", mask: "torch.Tensor", dim: int | None = None) -> "torch.Tensor":
    """veRL's `masked_sum`: values outside the mask (nan included) count as 0."""
    valid = values.where(mask.bool(), 0.0)
    return (valid * mask).sum() if dim is None else (valid * mask).sum(dim=dim)


@LOSS_AGGREGATIONS.register("token-mean")
def _token_mean(loss_mat: "torch.Tensor", loss_mask: "torch.Tensor") -> "torch.Tensor":
    return _masked_sum(loss_mat, loss_mask) / loss_mask.sum()


@LOSS_AGGREGATIONS.register("token-sum")
def _token_sum(loss_mat: "torch.Tensor", loss_mask: "torch.Tensor") -> "torch.Tensor":
    return _masked_sum(loss_mat, loss_mask)


@LOSS_AGGREGATIONS.register("seq-mean-token-sum")
def _seq_mean_token_sum(loss_mat: "torch.Tensor", loss_mask: "torch.Tensor") -> "torch.Tensor":
    seq_losses = (loss_mat * loss_mask).sum(dim=-1)
    seq_mask = (loss_mask.sum(dim=-1) > 0).float()  # rows without a trained token do not count
    return _masked_sum(seq_losses, seq_mask) / seq_mask.sum()


@LOSS_AGGREGATIONS.register("seq-mean-token-mean")
def _seq_mean_token_mean(loss_mat: "torch.Tensor", loss_mask: "torch.Tensor") -> "torch.Tensor":
    counts = loss_mask.sum(dim=-1)
    seq_losses = (loss_mat * loss_mask).sum(dim=-1) / (counts + 1e-8)
    seq_mask = (counts > 0).float()
    return _masked_sum(seq_losses, seq_mask) / seq_mask.sum()


def agg_loss(loss_mat: "torch.Tensor", loss_mask: "torch.Tensor", mode: str) -> "torch.Tensor":
    """Aggregate per-token losses (rows, length) over the tokens `loss_mask` marks, by `mode`."""
    return LOSS_AGGREGATIONS.get(mode)(loss_mat, loss_mask)


def pg_losses(
    logp: "torch.Tensor", old: "torch.Tensor", advantages: "torch.Tensor", clip: float
) -> "torch.Tensor":
    """Per-token clipped policy-gradient loss, veRL's `compute_policy_loss_vanilla` (dual clip included)."""
    ratio = (logp - old).clamp(-20.0, 20.0).exp()
    clipped = (-advantages * ratio).maximum(-advantages * ratio.clamp(1 - clip, 1 + clip))
    dual = (-advantages * CLIP_RATIO_C).minimum(clipped)
    return dual.where(advantages < 0, clipped)
