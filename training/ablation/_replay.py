"""Replay: how each credit variant would spread the gradient over the roles of recorded real traffic.

No training: the proxy's records of real harness runs are rebuilt into trajectories (the training core's
own code: tagging, failure policy, GRPO, credit), and for every variant this reports, per harness, the
share of trainable tokens and the share of advantage mass (|advantage| x trainable tokens) that lands on
each role. Shares are pooled over rollouts (sum over rollouts of the role's part / sum of the total), with
percentile bootstrap intervals over rollouts (`scipy.stats.bootstrap`, rollouts resampled as units).
"""

from collections import defaultdict
from pathlib import Path
from typing import Any, get_args

import numpy as np
from scipy import stats

from forge_eval._errors import UsageError
from forge_eval.analysis import N_RESAMPLES, RANDOM_STATE
from forge_eval.proxy import iter_attempts, read_calls, read_rollout
from forge_eval.proxy.records import RoleTag
from forge_eval.training import build_batch, build_trajectory, credit_variant, discard_reason
from forge_eval.training.trajectories import Trajectory

ROLES: tuple[str, ...] = get_args(RoleTag)
REPLAY_FILE = "replay.json"


def load_trajectories(records: Path) -> list[Trajectory]:
    """Every rollout attempt under a proxy records directory, rebuilt (attempts without a rollout record
    are skipped: the proxy never registered them)."""
    if not records.is_dir():
        raise UsageError(
            f"--replay {records} is not a directory", hint="pass the proxy's --records directory"
        )
    trajectories = []
    for rollout_id, attempt in iter_attempts(records):
        record = read_rollout(records, rollout_id, attempt)
        if record is not None:
            trajectories.append(build_trajectory(record, read_calls(records, rollout_id, attempt)))
    if not trajectories:
        raise UsageError(
            f"no rollout records under {records}",
            hint=(
                "the directory must hold <rollout>/<attempt>/calls.jsonl and rollout.json as the proxy "
                "writes them"
            ),
        )
    return trajectories


def _harness(t: Trajectory) -> str:
    return t.rollout.harness or "unknown"


def _ratio(parts: np.ndarray, totals: np.ndarray, random_state: int, n_resamples: int) -> dict[str, Any]:
    """Pooled share sum(parts)/sum(totals) with a bootstrap interval over rollouts."""
    total = float(totals.sum())
    if total == 0:
        return {"estimate": None, "ci_low": None, "ci_high": None}
    estimate = float(parts.sum()) / total
    if len(parts) < 2 or np.all(parts == parts[0]) and np.all(totals == totals[0]):
        return {
            "estimate": estimate,
            "ci_low": estimate if len(parts) > 1 else None,
            "ci_high": estimate if len(parts) > 1 else None,
        }

    def pooled(p: np.ndarray, t: np.ndarray, axis: int = -1) -> np.ndarray:
        s = t.sum(axis=axis)
        return np.divide(p.sum(axis=axis), s, out=np.zeros_like(s, dtype=float), where=s > 0)

    result = stats.bootstrap(
        (parts, totals),
        pooled,
        paired=True,
        vectorized=True,
        n_resamples=n_resamples,
        method="percentile",
        random_state=random_state,
    )
    return {
        "estimate": estimate,
        "ci_low": float(result.confidence_interval.low),
        "ci_high": float(result.confidence_interval.high),
    }


def _variant_shares(
    trajectories: list[Trajectory], variant: str, random_state: int, n_resamples: int
) -> dict[str, Any]:
    credit = credit_variant(variant)
    tokens = np.zeros((len(trajectories), len(ROLES)))
    response = np.zeros(len(trajectories))
    for i, t in enumerate(trajectories):
        for call, share in zip(t.calls, credit.assign(t, float(t.rollout.reward or 0.0)), strict=True):
            response[i] += len(call.response_ids)
            if share.loss_mask:
                tokens[i, ROLES.index(call.role)] += len(call.response_ids)
    rewarded = [t for t in trajectories if t.rollout.reward is not None]
    batch = build_batch(rewarded, credit=credit, merge=False)
    index = {t.rollout.rollout_id: i for i, t in enumerate(trajectories)}
    mass = np.zeros((len(trajectories), len(ROLES)))
    for row in batch.rows:
        mass[index[row.rollout_id], ROLES.index(row.roles[0])] += float(
            np.abs(row.advantages * row.response_mask).sum()
        )
    with_advantage = mass.sum(axis=1) > 0
    trainable = tokens.sum(axis=1)
    out: dict[str, Any] = {
        "trainable_fraction": _ratio(trainable, response, random_state, n_resamples),
        "token_share": {
            r: _ratio(tokens[:, k], trainable, random_state, n_resamples) for k, r in enumerate(ROLES)
        },
        "n_rollouts_with_advantage": int(with_advantage.sum()),
    }
    if with_advantage.any():
        m, total = mass[with_advantage], mass[with_advantage].sum(axis=1)
        out["advantage_share"] = {
            r: _ratio(m[:, k], total, random_state, n_resamples) for k, r in enumerate(ROLES)
        }
    else:
        out["advantage_share"] = None
        out["advantage_note"] = (
            "no rollout has a non-zero GRPO advantage (rewards missing, groups of one, or equal "
            "rewards in every "
            "group), so there is no advantage mass to split"
        )
    return out


def replay(
    records: Path,
    variants: tuple[str, ...] = ("broadcast", "masked", "terminal"),
    *,
    n_resamples: int = N_RESAMPLES,
    random_state: int = RANDOM_STATE,
) -> dict[str, Any]:
    """Per harness and variant, the token and advantage-mass shares of each role, with CIs over rollouts."""
    for v in variants:
        credit_variant(v)
    trajectories = load_trajectories(records)
    by_harness: dict[str, list[Trajectory]] = defaultdict(list)
    discarded: dict[str, dict[str, int]] = defaultdict(dict)
    for t in trajectories:
        reason = discard_reason(t)
        if reason is None:
            by_harness[_harness(t)].append(t)
        else:
            discarded[_harness(t)][reason] = discarded[_harness(t)].get(reason, 0) + 1
    harnesses = {}
    for harness in sorted(set(by_harness) | set(discarded)):
        kept = by_harness.get(harness, [])
        roles: dict[str, int] = defaultdict(int)
        for t in kept:
            for c in t.calls:
                roles[c.role] += 1
        harnesses[harness] = {
            "n_rollouts": len(kept),
            "discarded": discarded.get(harness, {}),
            "calls_per_role": dict(roles),
            "variants": {v: _variant_shares(kept, v, random_state, n_resamples) for v in variants}
            if kept
            else {},
        }
    return {
        "kind": "credit-replay",
        "records": str(records),
        "roles": list(ROLES),
        "estimator": "pooled share over rollouts (sum of the role's part / sum of the total); 95% percentile "
        f"bootstrap over rollouts, {n_resamples} resamples, seed {random_state}",
        "harnesses": harnesses,
    }
