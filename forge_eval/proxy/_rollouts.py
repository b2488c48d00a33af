"""Live rollouts: their record, call counter and per-rollout conversation store (in memory; the
records on disk are the durable part, and a restarted proxy rebuilds this state from them).

Per-rollout memory is bounded whatever the number of calls: the request-hash index that links a harness's
retries keeps only the latest `RECENT_REQUESTS` (a retry follows its failed call closely), and the
conversation store keeps a fixed number of responses.
"""

import time
from dataclasses import dataclass, field

from forge_eval.proxy._adapters import ConversationStore
from forge_eval.proxy.records import CallRecord, RolloutRecord

RECENT_REQUESTS = 64


@dataclass
class RolloutState:
    """One rollout attempt that the proxy serves."""

    record: RolloutRecord
    created_at: float = field(default_factory=time.time)
    next_seq: int = 0
    in_flight: int = 0
    conversations: ConversationStore = field(default_factory=ConversationStore)
    calls_by_hash: dict[str, str] = field(default_factory=dict)
    served_calls: bool = False  # by this process: only then has its record changed without a write

    def remember_request(self, request_hash: str, call_id: str) -> str | None:
        """Index a call by its request's hash; returns the call it repeats (a harness retry), if any."""
        retry_of = self.calls_by_hash.pop(request_hash, None)
        self.calls_by_hash[request_hash] = call_id  # re-inserted: the dict's order is recency
        while len(self.calls_by_hash) > RECENT_REQUESTS:
            del self.calls_by_hash[next(iter(self.calls_by_hash))]
        return retry_of

    @property
    def key(self) -> tuple[str, int]:
        return self.record.rollout_id, self.record.attempt

    def take_seq(self) -> int:
        seq = self.next_seq
        self.next_seq += 1
        self.served_calls = True
        return seq

    def expired(self, now: float) -> bool:
        deadline = self.record.deadline_s
        return deadline is not None and now > self.created_at + deadline


class Rollouts:
    """The rollouts the proxy knows, by (rollout_id, attempt). A call for any other rollout is refused."""

    def __init__(self) -> None:
        self._states: dict[tuple[str, int], RolloutState] = {}

    def get(self, rollout_id: str, attempt: int) -> RolloutState | None:
        return self._states.get((rollout_id, attempt))

    def latest(self, rollout_id: str) -> RolloutState | None:
        """The highest attempt of a rollout (control calls that name no attempt mean that one)."""
        attempts = [s for (r, _), s in self._states.items() if r == rollout_id]
        return max(attempts, key=lambda s: s.record.attempt, default=None)

    def add(self, record: RolloutRecord) -> tuple[RolloutState, bool]:
        """Register a rollout; idempotent on (id, attempt): the existing one is returned unchanged."""
        existing = self._states.get((record.rollout_id, record.attempt))
        if existing is not None:
            return existing, False
        state = self._states[(record.rollout_id, record.attempt)] = RolloutState(record)
        return state, True

    def restore(self, record: RolloutRecord, calls: list[CallRecord]) -> RolloutState:
        """Bring back a rollout a previous process served: `seq` goes on after the highest recorded one
        (calls in flight at a crash took seqs that left no record, hence max, not count)."""
        state, _ = self.add(record)
        state.created_at = record.t_start or state.created_at
        state.next_seq = max([record.n_calls, *(c.seq + 1 for c in calls)])
        for call in sorted(calls, key=lambda c: c.seq)[-RECENT_REQUESTS:]:
            if call.request_hash:
                state.remember_request(call.request_hash, call.call_id)
        return state

    def remove(self, rollout_id: str) -> list[RolloutState]:
        gone = [s for s in self._states.values() if s.record.rollout_id == rollout_id]
        for state in gone:
            del self._states[state.key]
        return gone

    def all(self) -> list[RolloutState]:
        return list(self._states.values())

    def __len__(self) -> int:
        return len(self._states)
