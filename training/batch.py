"""From trajectories to a training batch: failure policy, GRPO per group, credit per call, token rows.

A row is either one call (`merge=False`) or one prefix-merged chain (`merge=True`): the chain's first
prompt, then each call's sampled tokens (loss mask from the credit variant) with the interstitial tokens
between calls (tool results, user turns; mask 0, logprob 0). Rows with no trainable token are left out:
they carry no loss, and a masked row handed last to veRL's V1 trainer would zero the whole rollout's
advantage. Every row of a rollout gets the rollout's advantage, scaled per call by gamma^(T-t).
"""

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from forge_eval._errors import ForgeError, UsageError
from forge_eval.proxy.records import RoleTag
from forge_eval.training.advantages import Singletons, grpo_advantages
from forge_eval.training.credit import CallCredit, CreditVariant
from forge_eval.training.failures import DiscardReport, discard_reason
from forge_eval.training.partial import (
    Admission,
    Discard,
    PartialPolicy,
    PartialReport,
    is_partial,
    with_reward,
)
from forge_eval.training.trajectories import MergeStats, Trajectory

LossNorm = Literal["token", "rollout"]


@dataclass(slots=True)
class TrainingRow:
    """One sequence for the trainer: prompt, response, and per-response-token mask/logprob/advantage."""

    rollout_id: str
    group: str
    call_ids: tuple[str, ...]
    roles: tuple[RoleTag, ...]
    prompt_ids: np.ndarray
    response_ids: np.ndarray
    response_mask: np.ndarray
    logprobs: np.ndarray
    advantages: np.ndarray
    loss_weights: np.ndarray
    reward: float


@dataclass(slots=True)
class BatchStats:
    """What went into the batch and what was left out, and why."""

    rollouts: int = 0
    discards: DiscardReport = field(default_factory=DiscardReport)
    groups_kept: int = 0
    groups_dropped: int = 0
    rollouts_in_dropped_groups: int = 0
    rollouts_without_trainable_calls: int = 0
    unverified_rollouts: int = 0  # with calls that lack the engine's token ids: masked (no rows)
    rows: int = 0
    masked_rows_left_out: int = 0
    trainable_tokens: int = 0
    merge: MergeStats = field(default_factory=MergeStats)
    partial: PartialReport = field(default_factory=PartialReport)


@dataclass(slots=True)
class TrainingBatch:
    """The rows, what went in, and under `carry` the rollouts handed back for the next step: the
    partial ones to resume (`carried`) and the finished members of their groups (`held`)."""

    rows: list[TrainingRow]
    stats: BatchStats
    carried: list[Trajectory] = field(default_factory=list)
    held: list[Trajectory] = field(default_factory=list)


def group_key(trajectory: Trajectory) -> str:
    """The GRPO group of a rollout: its group uid, else its task id, else itself (a singleton)."""
    r = trajectory.rollout
    return r.group_uid or r.task_id or r.rollout_id


def row_of(t: Trajectory, members: list[int], credits: list[CallCredit], advantage: float) -> TrainingRow:
    """The row of calls `members` (one chain, or one call) of `t`, masked and scaled by `credits`."""
    calls = t.calls
    first = calls[members[0]]
    pieces, masks, logprobs, advs = [], [], [], []
    consumed = len(first.prompt_ids)
    for k in members:
        c = calls[k]
        gap = c.prompt_ids[consumed:] if k != members[0] else c.prompt_ids[:0]
        credit = credits[k]
        pieces += [gap, c.response_ids]
        masks += [np.zeros(len(gap), np.int8), np.full(len(c.response_ids), credit.loss_mask, np.int8)]
        logprobs += [np.zeros(len(gap), np.float32), c.logprobs]
        value = advantage * credit.scale if credit.loss_mask else 0.0
        advs += [np.zeros(len(gap), np.float32), np.full(len(c.response_ids), value, np.float32)]
        consumed = len(c.prompt_ids) + len(c.response_ids)
    mask = np.concatenate(masks)
    return TrainingRow(
        rollout_id=t.rollout.rollout_id,
        group=group_key(t),
        call_ids=tuple(calls[k].call_id for k in members),
        roles=tuple(calls[k].role for k in members),
        prompt_ids=first.prompt_ids,
        response_ids=np.concatenate(pieces),
        response_mask=mask,
        logprobs=np.concatenate(logprobs),
        advantages=np.concatenate(advs),
        loss_weights=mask.astype(np.float32),
        reward=float(t.rollout.reward),  # type: ignore[arg-type]  # rollout_rows checked it
    )


def rollout_rows(
    trajectory: Trajectory,
    credits: list[CallCredit],
    advantage: float,
    *,
    merge: bool = True,
    loss_norm: LossNorm = "token",
) -> tuple[list[TrainingRow], int]:
    """The trainable rows of one rollout, ordered by their last call, and how many masked rows were left out.

    A rollout with calls that came without the engine's token ids (`MergeStats.unverified`) gives no
    row: its tokens cannot be checked, and re-tokenizing its text would train on tokens that may never
    have been sampled.

    Args:
        trajectory: The rollout.
        credits: The credit variant's per-call output.
        advantage: The rollout-level advantage.
        merge: One row per prefix-merged chain (True) or per call (False).
        loss_norm: "token": each trainable token weighs 1; "rollout": a rollout's weights sum to 1, so
            each rollout weighs the same whatever its number of calls and tokens.
    """
    if loss_norm not in ("token", "rollout"):
        raise UsageError(f"unknown loss normalisation '{loss_norm}'", hint="use 'token' or 'rollout'")
    if trajectory.rollout.reward is None:  # never train on a silently substituted reward
        raise ValueError(
            f"rollout {trajectory.rollout.rollout_id} has no reward; the failure policy drops it"
        )
    if trajectory.stats.unverified:
        return [], 0
    groups = trajectory.chains if merge else [[i] for i in range(len(trajectory.calls))]
    rows = [row_of(trajectory, members, credits, advantage) for members in groups]
    seq = {c.call_id: c.seq for c in trajectory.calls}
    kept = sorted((r for r in rows if r.response_mask.any()), key=lambda r: seq[r.call_ids[-1]])
    if loss_norm == "rollout" and kept:
        total = sum(int(r.response_mask.sum()) for r in kept)
        for r in kept:
            r.loss_weights = r.loss_weights / np.float32(total)
    return kept, len(rows) - len(kept)


def build_batch(
    trajectories: Iterable[Trajectory],
    *,
    credit: CreditVariant,
    merge: bool = True,
    norm_by_std: bool = True,
    min_group_size: int = 2,
    singletons: Singletons = "drop",
    loss_norm: LossNorm = "token",
    partial: PartialPolicy | None = None,
) -> TrainingBatch:
    """Apply the failure and partial-rollout policies, GRPO per group, credit, and build the rows.

    `singletons="raw"` keeps a group left with one survivor the way veRL's V1 trainer does (its raw
    reward as advantage, see `forge_eval.training.advantages`); the default drops it. `partial` (default
    `discard`) decides what happens to rollouts cut short (`forge_eval.training.partial`).
    """
    policy = partial or Discard()
    stats = BatchStats(partial=PartialReport(policy=policy.name))
    admitted: list[tuple[Trajectory, Admission]] = []
    verified = 0  # rollouts with answered calls, all of them with engine token ids
    for t in trajectories:
        stats.rollouts += 1
        stats.unverified_rollouts += int(t.stats.unverified > 0)
        verified += int(t.stats.n_calls > 0 and not t.stats.unverified)
        reason = discard_reason(t)
        admission = policy.admit(t, reason)
        stats.partial.add(reason, admission, reason is not None and is_partial(t))
        stats.discards.add(len(t.calls), reason if admission.action == "discard" else None)
        for name in MergeStats.__slots__:
            setattr(stats.merge, name, getattr(stats.merge, name) + getattr(t.stats, name))
        admitted.append((t, admission))
    if stats.unverified_rollouts and not verified:
        raise ForgeError(
            f"none of the {stats.rollouts} rollouts has verifiable tokens: {stats.merge.unverified} "
            "answered calls came without the engine's prompt or completion token ids",
            hint="ask the upstream for return_token_ids (vLLM) and make sure no router or gateway in "
            "front of it drops prompt_token_ids; forge-eval never re-tokenizes text to fill them in",
        )
    carried_groups = {group_key(t) for t, a in admitted if a.action == "carry"}
    carried = [t for t, a in admitted if a.action == "carry"]
    held = [t for t, a in admitted if a.in_group and group_key(t) in carried_groups]
    stats.partial.held = len(held)
    members = [(t, a) for t, a in admitted if a.in_group and group_key(t) not in carried_groups]
    started = Counter(group_key(t) for t, _ in admitted)
    kept = Counter(group_key(t) for t, _ in members)
    short = {g: n - kept[g] for g, n in started.items() if kept[g] < n and g not in carried_groups}
    stats.partial.groups_short, stats.partial.members_lost = len(short), sum(short.values())
    grpo = grpo_advantages(
        [float(a.reward) for _, a in members],  # type: ignore[arg-type]  # members have rewards
        [group_key(t) for t, _ in members],
        norm_by_std=norm_by_std,
        min_group_size=min_group_size,
        singletons=singletons,
    )
    stats.groups_kept, stats.groups_dropped = grpo.groups_kept, grpo.groups_dropped
    stats.rollouts_in_dropped_groups = grpo.rollouts_dropped
    rows: list[TrainingRow] = []
    for (t, admission), advantage in zip(members, grpo.advantages, strict=True):
        if advantage is None or not admission.learns:
            continue
        t = with_reward(t, admission.reward)  # type: ignore[arg-type]  # a partial one's is the policy's
        credits = credit.assign(t, float(t.rollout.reward))  # type: ignore[arg-type]
        kept, left_out = rollout_rows(t, credits, advantage, merge=merge, loss_norm=loss_norm)
        stats.masked_rows_left_out += left_out
        stats.rollouts_without_trainable_calls += int(not kept)
        rows += kept
    stats.rows = len(rows)
    stats.trainable_tokens = sum(int(r.response_mask.sum()) for r in rows)
    return TrainingBatch(rows=rows, stats=stats, carried=carried, held=held)
