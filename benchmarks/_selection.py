"""Which tasks a run asks for, and which of them can run here: one home for every benchmark.

- `select(tasks, task_ids, subset, ...)`: the tasks a run asks for, by listed ids (in that order) or by
  a subset name (a named subset such as "quick", or a group a task belongs to: a category, a site, a
  difficulty). Unknown names are usage errors that list the valid ones.
- `SkipRules`: why a chosen task cannot run here, as small named rules asked in order (the first reason
  found is the one reported). A skipped task is reported with its reason and never scored 0.
- `Selection`: the outcome, runnable samples and skipped task ids with their reasons; `load`,
  `skipped`, the Inspect task and the runner's task count all come from one `Selection`.
- `NothingRunnableError`: none of the chosen tasks can run here (exit status 2, each task's reason).
- `reason_counts`: skipped tasks counted by reason, for summaries (`forge-eval run --dry-run`, docs).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from inspect_ai.dataset import Sample

from forge_eval._errors import UnknownNameError, UsageError
from forge_eval._registry import Registry

T = TypeVar("T")
C = TypeVar("C")

#: Skipped tasks a `NothingRunnableError` lists one by one (the rest are counted).
LISTED_REASONS = 25
#: Where a skip reason's task-specific detail starts (`reason_counts`).
_REASON_DETAIL = re.compile(r" \(|;")


def _id(task: Any) -> str:
    return str(task.id)


def select(
    tasks: Sequence[T],
    task_ids: str | Sequence[str] | None = None,
    subset: str | None = None,
    *,
    what: str,
    id_of: Callable[[T], str] = _id,
    subsets: Mapping[str, Callable[[T], bool] | Sequence[str]] | None = None,
    groups: Callable[[T], Iterable[str]] | None = None,
    subset_kind: str = "subset",
) -> list[T]:
    """The tasks a run asks for.

    Args:
        tasks: Every task of the benchmark, in its own order.
        task_ids: Task ids, comma-separated or as a list: exactly these, in this order (overrides
            `subset`).
        subset: None or "all" (every task), a name of `subsets`, or a group `groups` gives a task.
        what: The benchmark's name in messages ("forgelab", "Claw-Eval").
        id_of: A task's id (default: its `id` attribute).
        subsets: Named subsets (e.g. "quick", "paper"): name -> whether a task belongs to it, or the
            subset's task ids in their order.
        groups: The groups a task belongs to (its category, difficulty, site, ...); each is a subset.
        subset_kind: What the benchmark calls a subset in messages ("site", "level").

    Raises:
        UnknownNameError: a listed id no task has.
        UsageError: a subset that is neither "all", nor named, nor a group (the message lists them).
    """
    if task_ids:
        wanted = [i.strip() for i in task_ids.split(",")] if isinstance(task_ids, str) else list(task_ids)
        by_id = {id_of(t): t for t in tasks}
        for task_id in (i for i in wanted if i):
            if task_id not in by_id:
                raise UnknownNameError(f"{what} task", task_id, list(by_id))
        return [by_id[i] for i in wanted if i]
    if subset in (None, "all"):
        return list(tasks)
    named = subsets or {}
    if subset in named:
        member = named[subset]
        if callable(member):
            return [t for t in tasks if member(t)]
        return select(tasks, list(member), what=what, id_of=id_of)
    known = {g for t in tasks for g in groups(t)} if groups else set()
    if subset not in known:
        raise UsageError(
            f"unknown {what} {subset_kind} '{subset}'",
            hint=f"use one of: {', '.join(['all', *named, *sorted(known)])}",
        )
    return [t for t in tasks if groups is not None and subset in set(groups(t))]


Rule = Callable[[T, C], "str | None"]


class SkipRules(Generic[T, C]):
    """Why a task cannot run here, as named rules asked in the order they were added.

    A rule takes a task and a context (what the rules may consult: the data folder, the provider, ...)
    and returns the reason in words a report can show, or None. Register rules with `@rules.rule(name)`.
    """

    def __init__(self, what: str) -> None:
        self._rules: Registry[Rule[T, C]] = Registry(f"{what} skip rule")
        self._order: list[str] = []

    def rule(self, name: str) -> Callable[[Rule[T, C]], Rule[T, C]]:
        """Register the decorated function as the rule `name`, asked after those registered before."""

        def add(function: Rule[T, C]) -> Rule[T, C]:
            self._rules.register(name, function)
            self._order.append(name)
            return function

        return add

    def names(self) -> list[str]:
        """The rules, in the order they are asked."""
        return list(self._order)

    def reason(self, task: T, context: C, *, skip: Iterable[str] = ()) -> str | None:
        """The first reason a rule gives (rules named in `skip` are not asked), or None when it can run."""
        passed = set(skip)
        for name in self._order:
            if name not in passed and (found := self._rules.get(name)(task, context)):
                return found
        return None


@dataclass(frozen=True)
class Selection:
    """The tasks a run chose: the samples that can run here, and the others with their reasons.

    Attributes:
        samples: Runnable samples, in the order they were chosen.
        skipped: Task id -> why it cannot run here (reported as skipped, never scored 0).
        hint: What to do when nothing can run (the benchmark knows what its reasons need).
    """

    samples: list[Sample]
    skipped: dict[str, str] = field(default_factory=dict)
    hint: str | None = None

    @property
    def n_total(self) -> int:
        """The chosen tasks, runnable or skipped."""
        return len(self.samples) + len(self.skipped)

    def runnable(self, benchmark: str) -> list[Sample]:
        """The samples; raises `NothingRunnableError` (with every reason) when there are none."""
        if not self.samples:
            raise NothingRunnableError(benchmark, self.skipped, self.hint)
        return list(self.samples)

    @classmethod
    def of(
        cls,
        tasks: Iterable[T],
        *,
        sample: Callable[[T], Sample],
        reason: Callable[[T], str | None] = lambda _: None,
        id_of: Callable[[T], str] = _id,
        hint: str | None = None,
    ) -> Selection:
        """Split chosen tasks into runnable samples (`sample(task)`) and skipped ids (`reason(task)`)."""
        samples, skipped = [], {}
        for task in tasks:
            if why := reason(task):
                skipped[id_of(task)] = why
            else:
                samples.append(sample(task))
        return cls(samples, skipped, hint)


def reason_counts(skipped: Mapping[str, str]) -> list[tuple[str, int]]:
    """Skipped tasks counted by the head of their reason (the words before its first parenthesis or
    semicolon, where a rule puts the task's own detail), most frequent first, then by name: a summary a
    person can read where hundreds of tasks are skipped."""
    counts = Counter(_REASON_DETAIL.split(reason, maxsplit=1)[0].strip() for reason in skipped.values())
    return sorted(counts.items(), key=lambda item: (-item[1], item[0]))


class NothingRunnableError(UsageError):
    """None of the chosen tasks can run on this machine; the message lists each task's reason."""

    def __init__(self, benchmark: str, skipped: Mapping[str, str], hint: str | None = None) -> None:
        listed = list(skipped.items())[:LISTED_REASONS]
        lines = [f"  - {task_id}: {why}" for task_id, why in listed]
        if len(skipped) > len(listed):
            lines.append(f"  ... and {len(skipped) - len(listed)} more")
        what = f"none of the {len(skipped)} chosen {benchmark} tasks" if skipped else f"no {benchmark} task"
        super().__init__(
            "\n".join([f"{what} can run here:", *lines]) if lines else f"{what} was chosen",
            hint=hint or "choose other tasks (-T task_ids=, -T subset=) or provide what the reasons name",
        )
        self.benchmark = benchmark
        self.skipped = dict(skipped)
