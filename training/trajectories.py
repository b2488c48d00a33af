"""Rebuild a rollout from its call records: ordered calls, engine token ids, prefix-merged chains, roles.

Token ids always come from the engine (`prompt_token_ids` / `completion_token_ids` as vLLM returned them);
nothing is re-tokenized, because a re-rendered response drifts from what was sampled (reference
rl-training.md §3). Calls are chained by exact token-prefix merge: a call joins a chain when its prompt
starts with the chain's last prompt + response. A call whose prompt extends the chain's last *prompt* but
not its response is a merge break (the harness or template re-rendered the response) and starts a chain.
"""

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from forge_eval._errors import ForgeError
from forge_eval.proxy.records import CallRecord, ErrorKind, RoleTag, RolloutRecord
from forge_eval.training._signals import call_signals
from forge_eval.training._tagging import tag_calls


@dataclass(slots=True)
class TrajectoryCall:
    """One delivered call with its engine tokens (int32/float32 arrays) and its derived role and chain."""

    call_id: str
    seq: int
    prompt_ids: np.ndarray
    response_ids: np.ndarray
    logprobs: np.ndarray
    role: RoleTag
    chain: int
    finish_reason: str | None
    policy_version: int | None
    model_alias: str | None
    t_delivered: float | None


@dataclass(slots=True)
class MergeStats:
    """Per-rollout reconstruction statistics (how many calls merged, how many merges broke).

    `unverified` counts answered calls that came without the engine's prompt or completion ids (an
    upstream or a router in front of it that drops them): the rollout's tokens cannot be checked, so
    `build_batch` masks the whole rollout instead of training on the calls that kept their ids.
    """

    n_records: int = 0
    n_calls: int = 0
    n_chains: int = 0
    merged: int = 0
    breaks: int = 0
    dropped_no_tokens: int = 0
    dropped_disconnected: int = 0
    dropped_retried: int = 0
    unverified: int = 0

    @property
    def merge_rate(self) -> float:
        """Merged calls over calls that extended an earlier prompt (1.0 when nothing could merge)."""
        tried = self.merged + self.breaks
        return self.merged / tried if tried else 1.0


@dataclass(slots=True)
class Trajectory:
    """A rollout's calls in order, with chains, roles and the facts the failure policy needs."""

    rollout: RolloutRecord
    calls: list[TrajectoryCall]
    chains: list[list[int]]
    stats: MergeStats
    last_error: ErrorKind = "none"
    error_calls: int = 0
    policy_versions: set[int] = field(default_factory=set)

    @property
    def roles(self) -> list[RoleTag]:
        return [c.role for c in self.calls]


def _usable(records: Sequence[CallRecord], stats: MergeStats) -> list[CallRecord]:
    """Delivered calls with tokens; a harness retry replaces the call it retried (the last one is used)."""
    ordered = sorted(records, key=lambda r: r.seq)
    retried = {r.retry_of for r in ordered if r.retry_of}
    kept = []
    for r in ordered:
        if r.client_disconnected:
            stats.dropped_disconnected += 1
        elif r.call_id in retried:
            stats.dropped_retried += 1
        elif not r.completion_token_ids or r.prompt_token_ids is None:
            stats.dropped_no_tokens += 1
            answered = r.error_kind == "none"
            stats.unverified += int(answered and None in (r.prompt_token_ids, r.completion_token_ids))
        else:
            kept.append(r)
    return kept


def _is_prefix(prefix: np.ndarray, full: np.ndarray) -> bool:
    n = len(prefix)
    return n <= len(full) and bool(np.array_equal(full[:n], prefix))


def _chain_of(
    prompt: np.ndarray, calls: list[TrajectoryCall], chains: list[list[int]], stats: MergeStats
) -> int:
    """Index of the chain `prompt` extends exactly (most recently extended first), or -1."""
    broke = False
    for chain_index in sorted(range(len(chains)), key=lambda c: chains[c][-1], reverse=True):
        tail = calls[chains[chain_index][-1]]
        n_prompt = len(tail.prompt_ids)
        if not _is_prefix(tail.prompt_ids, prompt):
            continue
        if _is_prefix(tail.response_ids, prompt[n_prompt:]):
            stats.merged += 1
            return chain_index
        broke = True
    stats.breaks += int(broke)
    return -1


def _share_prefix(prompt: np.ndarray, members: list[TrajectoryCall]) -> None:
    """Point the chain's earlier tokens into `prompt`, which was checked to extend them exactly.

    Without this a rollout holds every call's full prompt (quadratic in its length); with it, a chain
    holds one token buffer, its longest prompt.
    """
    for call in members:
        n_prompt, n_response = len(call.prompt_ids), len(call.response_ids)
        call.prompt_ids = prompt[:n_prompt]
        call.response_ids = prompt[n_prompt : n_prompt + n_response]


def build_trajectory(rollout: RolloutRecord, records: Sequence[CallRecord]) -> Trajectory:
    """Order, chain and tag one rollout's call records.

    Args:
        rollout: The rollout record (harness name, termination, reward).
        records: All call records of the rollout, in any order.
    """
    stats = MergeStats(n_records=len(records))
    usable = _usable(records, stats)
    errors = [r for r in sorted(records, key=lambda r: r.seq) if r.error_kind != "none"]
    calls: list[TrajectoryCall] = []
    chains: list[list[int]] = []
    heads: list[int] = []
    for r in usable:
        prompt = np.asarray(r.prompt_token_ids, dtype=np.int32)
        response = np.asarray(r.completion_token_ids, dtype=np.int32)
        logprobs = np.asarray(r.completion_logprobs or [], dtype=np.float32)
        if len(logprobs) not in (0, len(response)):
            raise ForgeError(
                f"call {r.call_id} of rollout {r.rollout_id} has {len(logprobs)} logprobs for "
                f"{len(response)} completion tokens",
                hint="the proxy must record one processed logprob per sampled token (vLLM logprobs=true)",
            )
        chain = _chain_of(prompt, calls, chains, stats)
        if chain < 0:
            chain = len(chains)
            chains.append([])
        else:
            _share_prefix(prompt, [calls[k] for k in chains[chain]])
        chains[chain].append(len(calls))
        heads.append(chains[chain][0])
        calls.append(
            TrajectoryCall(
                call_id=r.call_id,
                seq=r.seq,
                prompt_ids=prompt,
                response_ids=response,
                logprobs=logprobs if len(logprobs) else np.zeros(len(response), np.float32),
                role="answer",
                chain=chain,
                finish_reason=r.finish_reason,
                policy_version=r.policy_version,
                model_alias=r.model_alias,
                t_delivered=r.t_delivered,
            )
        )
    roles = tag_calls(
        rollout.harness or (usable[0].harness if usable else None), [call_signals(r) for r in usable], heads
    )
    for call, role in zip(calls, roles, strict=True):
        call.role = role
    stats.n_calls, stats.n_chains = len(calls), len(chains)
    last_error: ErrorKind = "none"
    if errors and (not usable or errors[-1].seq > usable[-1].seq):
        last_error = errors[-1].error_kind
    return Trajectory(
        rollout=rollout,
        calls=calls,
        chains=chains,
        stats=stats,
        last_error=last_error,
        error_calls=len(errors),
        policy_versions={v for r in usable if (v := r.policy_version) is not None}
        | set(rollout.policy_versions),
    )


def read_rollout_jsonl(path: Path) -> list[CallRecord]:
    """Read one rollout's call records (one `CallRecord.model_dump_json()` per line)."""
    records = []
    with path.open("rb") as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                records.append(CallRecord.model_validate_json(line))
            except ValueError as e:
                raise ForgeError(
                    f"{path}:{number}: not a call record ({str(e).splitlines()[0]})",
                    hint="the file must hold one CallRecord JSON object per line, as the proxy writes it",
                ) from None
    return records
