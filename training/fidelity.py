"""Token fidelity: can a rollout's calls be trained on as the engine sampled them, and where do they break?

A trainer learns the tokens it is given; if a router or a chat template changed them, it learns tokens the
model never sampled. So, per rollout and per harness:

- **token-exact**: calls whose prompt extends an earlier call's prompt + sampled completion token for token
  (they join that call's prefix-merged chain; the first call of a rollout has nothing to extend);
- **merge breaks**, by cause (`BREAK_CAUSES`): the calls that start a new chain instead;
- **calls without engine ids**: answered calls recorded without the engine's prompt or completion ids. Such
  a rollout is *unverified*: `build_batch` masks it and counts it, and nothing re-tokenizes its text.
"""

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from forge_eval.proxy import iter_attempts, read_calls, read_rollout
from forge_eval.training.trajectories import Trajectory, build_trajectory

#: Why a call starts a new chain, in the order they are tested. `compaction`: it or the call before it is
#: a compaction call; `subagent`: it or the call before it belongs to a side conversation (a subagent, a
#: title call); `template`: its prompt extends an earlier call's prompt but not that call's sampled tokens
#: (the harness or the chat template re-rendered them, e.g. Qwen3 drops earlier `<think>` blocks);
#: `history`: it extends no earlier prompt (turns dropped or edited, a system prompt changed).
BREAK_CAUSES: tuple[str, ...] = ("compaction", "subagent", "template", "history")
_SIDE_ROLES = frozenset({"subagent", "title", "aux"})


@dataclass(slots=True)
class Fidelity:
    """Token fidelity of one rollout, or the sum over several (`rollouts` > 1)."""

    harness: str
    rollouts: int = 0
    unverified_rollouts: int = 0
    calls: int = 0
    without_ids: int = 0
    checked: int = 0
    exact: int = 0
    breaks: Counter[str] = field(default_factory=Counter)

    @property
    def exact_share(self) -> float | None:
        """Token-exact calls over calls that had an earlier call to extend (None when none had)."""
        return self.exact / self.checked if self.checked else None

    @property
    def breaks_per_rollout(self) -> float:
        return sum(self.breaks.values()) / self.rollouts if self.rollouts else 0.0

    def add(self, other: "Fidelity") -> None:
        self.rollouts += other.rollouts
        self.unverified_rollouts += other.unverified_rollouts
        self.calls += other.calls
        self.without_ids += other.without_ids
        self.checked += other.checked
        self.exact += other.exact
        self.breaks.update(other.breaks)


def _extends(prefix: np.ndarray, full: np.ndarray) -> bool:
    return len(prefix) <= len(full) and bool(np.array_equal(full[: len(prefix)], prefix))


def _template(t: Trajectory, i: int) -> bool:
    prompt = t.calls[i].prompt_ids
    return any(_extends(c.prompt_ids, prompt) for c in t.calls[:i])


def _compaction(t: Trajectory, i: int) -> bool:
    return t.calls[i].role == "compaction" or t.calls[i - 1].role == "compaction"


def _subagent(t: Trajectory, i: int) -> bool:
    return t.calls[i].role in _SIDE_ROLES or t.calls[i - 1].role in _SIDE_ROLES


_CAUSE_TESTS: dict[str, Callable[[Trajectory, int], bool]] = {
    "compaction": _compaction,
    "subagent": _subagent,
    "template": _template,
    "history": lambda t, i: True,
}


def break_cause(trajectory: Trajectory, index: int) -> str:
    """Why call `index` (not its rollout's first) starts a new chain: the first `BREAK_CAUSES` that fits."""
    return next(cause for cause in BREAK_CAUSES if _CAUSE_TESTS[cause](trajectory, index))


def rollout_fidelity(trajectory: Trajectory) -> Fidelity:
    """The token fidelity of one rebuilt rollout (`build_trajectory`)."""
    calls = trajectory.calls
    harness = trajectory.rollout.harness or "unknown"
    stats = trajectory.stats
    fidelity = Fidelity(
        harness=harness,
        rollouts=1,
        unverified_rollouts=int(stats.unverified > 0),
        calls=len(calls) + stats.unverified,
        without_ids=stats.unverified,
        checked=max(len(calls) - 1, 0),
    )
    for i in range(1, len(calls)):
        if trajectory.chains[calls[i].chain][0] != i:
            fidelity.exact += 1
        else:
            fidelity.breaks[break_cause(trajectory, i)] += 1
    return fidelity


def by_harness(fidelities: Iterable[Fidelity]) -> dict[str, Fidelity]:
    """Rollout fidelities summed per harness, harnesses in name order."""
    totals: dict[str, Fidelity] = {}
    for f in fidelities:
        totals.setdefault(f.harness, Fidelity(harness=f.harness)).add(f)
    return dict(sorted(totals.items()))


def records_fidelity(root: Path) -> list[tuple[str, int, Fidelity]]:
    """(rollout id, attempt, fidelity) of every rollout attempt in a proxy's records directory."""
    found = []
    for rollout_id, attempt in iter_attempts(Path(root)):
        record = read_rollout(root, rollout_id, attempt)
        if record is None:
            continue
        calls = read_calls(root, rollout_id, attempt)
        if record.harness is None and calls:
            record = record.model_copy(update={"harness": calls[0].harness})
        found.append((rollout_id, attempt, rollout_fidelity(build_trajectory(record, calls))))
    return found


_COLUMNS = ("rollouts", "unverified", "calls", "no ids", "checked", "exact", "share", "breaks/rollout")


def _cells(f: Fidelity) -> list[str]:
    share = "-" if f.exact_share is None else f"{f.exact_share:.3f}"
    causes = ", ".join(f"{c} {f.breaks[c]}" for c in BREAK_CAUSES if f.breaks[c]) or "-"
    numbers = (f.rollouts, f.unverified_rollouts, f.calls, f.without_ids, f.checked, f.exact)
    return [*map(str, numbers), share, f"{f.breaks_per_rollout:.2f}", causes]


def fidelity_table(rows: Iterable[tuple[str, Fidelity]], first: str = "harness") -> str:
    """A fixed-width text table: one line per (label, fidelity), with breaks by cause last."""
    header = [first, *_COLUMNS, "breaks by cause"]
    lines = [header, *([label, *_cells(f)] for label, f in rows)]
    widths = [max(len(line[k]) for line in lines) for k in range(len(header))]
    return "\n".join(
        "  ".join(
            cell.ljust(w) if k in (0, len(header) - 1) else cell.rjust(w)
            for k, (cell, w) in enumerate(zip(line, widths, strict=True))
        ).rstrip()
        for line in lines
    )


@dataclass(slots=True)
class StepFidelity:
    """The rollout fidelities of the current training step, whose table `add` hands back once a rollout
    of a later step arrives. veRL makes one agent-loop object per rollout, so a worker keeps one of these
    across them; a rollout of an earlier step (asynchronous training) joins the current one."""

    step: int | None = None
    fidelities: list[Fidelity] = field(default_factory=list)

    def add(self, step: int | None, fidelity: Fidelity) -> str | None:
        """Count `fidelity` under `step` (the policy version that sampled it); the ended step's table."""
        later = step is not None and (self.step is None or step > self.step)
        ended = None
        if later and self.fidelities:
            table = fidelity_table(by_harness(self.fidelities).items())
            ended = f"token fidelity of step {self.step}:\n{table}"
            self.fidelities = []
        if later:
            self.step = step
        self.fidelities.append(fidelity)
        return ended


def summary(fidelity: Fidelity) -> str:
    """One line: token-exact calls, merge breaks by cause, calls without engine ids."""
    causes = ", ".join(f"{c} {fidelity.breaks[c]}" for c in BREAK_CAUSES if fidelity.breaks[c])
    return (
        f"{fidelity.exact}/{fidelity.checked} calls token-exact, "
        f"{sum(fidelity.breaks.values())} merge breaks ({causes or 'none'}), "
        f"{fidelity.without_ids} of {fidelity.calls} calls without engine token ids"
    )
