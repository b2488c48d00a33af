"""Live rollouts: their record, call counter and per-rollout conversation store (in memory; the
records on disk are the durable part)."""

import time
from dataclasses import dataclass, field

from forge_eval.training.proxy._adapters import ConversationStore
from forge_eval.training.records import RolloutRecord


@dataclass
class RolloutState:
    """One rollout attempt that the proxy serves."""

    record: RolloutRecord
    created_at: float = field(default_factory=time.time)
    next_seq: int = 0
    in_flight: int = 0
    conversations: ConversationStore = field(default_factory=ConversationStore)
    calls_by_hash: dict[str, str] = field(default_factory=dict)

    @property
    def key(self) -> tuple[str, int]:
        return self.record.rollout_id, self.record.attempt

    def take_seq(self) -> int:
        seq = self.next_seq
        self.next_seq += 1
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

    def remove(self, rollout_id: str) -> list[RolloutState]:
        gone = [s for s in self._states.values() if s.record.rollout_id == rollout_id]
        for state in gone:
            del self._states[state.key]
        return gone

    def all(self) -> list[RolloutState]:
        return list(self._states.values())

    def __len__(self) -> int:
        return len(self._states)
