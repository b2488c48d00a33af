"""The `Benchmark` interface: what `forge-eval run` needs to know about a benchmark."""

from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from inspect_ai import Task
from inspect_ai.dataset import Sample


@dataclass(frozen=True)
class OfficialSettings:
    """The benchmark's own protocol, so that runs are comparable with published numbers.

    Attributes:
        trials: Trials per task in the official protocol (pass^k / pass@k use k = trials).
        pass_threshold: A trial passes when its score is >= this value.
        message_limit: Messages per trial before the agent is stopped.
        time_limit: Seconds per trial before the agent is stopped.
        graded: Whether scores are graded in [0, 1] (then "mean score" is reported too).
        judge_role: Inspect model role of an LLM judge, if the protocol uses one.
    """

    trials: int = 1
    pass_threshold: float = 1.0
    message_limit: int | None = None
    time_limit: int | None = None
    graded: bool = False
    judge_role: str | None = None


class Benchmark(ABC):
    """A benchmark: its data, its Inspect task per seed, and its official settings."""

    name: ClassVar[str]
    description: ClassVar[str]
    default_harness: ClassVar[str] = "react"
    official: ClassVar[OfficialSettings] = OfficialSettings()
    #: Task ids of the quick default subset (the README's first command); None = all tasks.
    quick_subset: ClassVar[tuple[str, ...] | None] = None

    def requirements(self) -> list[str]:
        """What is missing to run this benchmark here, one message per item (empty = ready)."""
        return []

    @abstractmethod
    def load(self, data_dir: Path | None = None) -> list[Sample]:
        """The benchmark's samples, from `data_dir` or the benchmark's own source."""

    @abstractmethod
    def task(self, *, seed: int, harness: str, **options: Any) -> Task:
        """One Inspect task for one seed; `seed` must reach the model's sampling."""
