"""Failure policy: which rollouts the trainer may use, with a recorded reason for every discard.

Discarded: timeouts, OOM/eviction, a harness crash without an answer, a terminal upstream error (the last
event of the rollout was a failed upstream call, or the proxy gave up), an aborted generation, mixed policy
versions, a missing reward. Kept: rollouts whose mid-run upstream errors were recovered (discarding them
biases training toward short episodes, whose blip rate is lower), and terminal context-length rejections,
which the verifier grades like any other ending. A missing reward is never replaced by 0.
"""

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from forge_eval.training.trajectories import Trajectory

Check = Callable[[Trajectory], str | None]


def _declared(t: Trajectory) -> str | None:
    r = t.rollout
    return (r.discard_reason or "discarded by the proxy") if r.discard else None


def _unfinished(t: Trajectory) -> str | None:
    return "unfinished" if t.rollout.termination == "running" else None


def _timeout(t: Trajectory) -> str | None:
    return "timeout" if t.rollout.termination == "timeout" else None


def _resources(t: Trajectory) -> str | None:
    return t.rollout.termination if t.rollout.termination in ("oom", "evicted") else None


def _crash_without_answer(t: Trajectory) -> str | None:
    answered = t.rollout.answer is not None or "answer" in t.roles
    crashed = t.rollout.termination == "harness_crash"
    return "harness_crash_without_answer" if crashed and not answered else None


def _terminal_upstream_error(t: Trajectory) -> str | None:
    if t.rollout.termination == "proxy_terminal_error":
        return "terminal_upstream_error"
    last = t.last_error
    return "terminal_upstream_error" if last not in ("none", "context_length") else None


def _aborted(t: Trajectory) -> str | None:
    aborted = t.rollout.termination == "aborted" or any(c.finish_reason == "abort" for c in t.calls)
    return "aborted_generation" if aborted else None


def _mixed_versions(t: Trajectory) -> str | None:
    return "mixed_policy_versions" if len(t.policy_versions) > 1 else None


def _no_calls(t: Trajectory) -> str | None:
    return "no_calls_with_tokens" if not t.calls else None


def _no_reward(t: Trajectory) -> str | None:
    return "no_reward" if t.rollout.reward is None else None


# Ordered: the first check that fires is the recorded reason.
CHECKS: tuple[Check, ...] = (
    _declared,
    _unfinished,
    _timeout,
    _resources,
    _crash_without_answer,
    _terminal_upstream_error,
    _aborted,
    _mixed_versions,
    _no_calls,
    _no_reward,
)


def discard_reason(trajectory: Trajectory) -> str | None:
    """Why `trajectory` must not be trained on, or None when it is usable."""
    return next((reason for check in CHECKS if (reason := check(trajectory)) is not None), None)


# Episode-length buckets (number of delivered calls), upper bounds inclusive.
LENGTH_BUCKETS: tuple[int, ...] = (4, 8, 16, 32, 64, 128)


def _bucket(n_calls: int) -> str:
    low = 0
    for high in LENGTH_BUCKETS:
        if n_calls <= high:
            return f"{low}-{high}"
        low = high + 1
    return f">{LENGTH_BUCKETS[-1]}"


@dataclass(slots=True)
class DiscardBucket:
    """Discards among rollouts of one episode-length bucket."""

    calls: str
    rollouts: int = 0
    discarded: int = 0
    reasons: Counter[str] = field(default_factory=Counter)

    @property
    def rate(self) -> float:
        return self.discarded / self.rollouts if self.rollouts else 0.0


@dataclass(slots=True)
class DiscardReport:
    """Discard counts by reason and discard rate against episode length."""

    rollouts: int = 0
    discarded: int = 0
    reasons: Counter[str] = field(default_factory=Counter)
    by_length: dict[str, DiscardBucket] = field(default_factory=dict)

    @property
    def rate(self) -> float:
        return self.discarded / self.rollouts if self.rollouts else 0.0

    def add(self, n_calls: int, reason: str | None) -> None:
        key = _bucket(n_calls)
        bucket = self.by_length.setdefault(key, DiscardBucket(calls=key))
        self.rollouts += 1
        bucket.rollouts += 1
        if reason is not None:
            self.discarded += 1
            bucket.discarded += 1
            self.reasons[reason] += 1
            bucket.reasons[reason] += 1

    def rows(self) -> list[dict[str, object]]:
        """One row per length bucket, shortest first (for a table or a DataFrame)."""
        order = {_bucket(h): i for i, h in enumerate((*LENGTH_BUCKETS, LENGTH_BUCKETS[-1] + 1))}
        return [
            {
                "calls": b.calls,
                "rollouts": b.rollouts,
                "discarded": b.discarded,
                "rate": b.rate,
                "reasons": dict(b.reasons),
            }
            for b in sorted(self.by_length.values(), key=lambda b: order[b.calls])
        ]


def discard_report(trajectories: Iterable[Trajectory], reasons: Sequence[str | None]) -> DiscardReport:
    """Tally the discard `reasons` (one per trajectory) against episode length."""
    report = DiscardReport()
    for t, reason in zip(trajectories, reasons, strict=True):
        report.add(len(t.calls), reason)
    return report
