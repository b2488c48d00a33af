"""The `Benchmark` interface: what `forge-eval run` needs to know about a benchmark.

What a benchmark declares, and where the runner uses it:

- `official: OfficialSettings` -- the published protocol. `trials` is the default of `--epochs`
  (printed when defaulted); `judge_role` / `judge_model` name the LLM judge (see below);
  `paper_scores` + `paper_source` are the paper's numbers, written to results.json `reference` and
  shown beside ours in the report.
- `load(data_dir)` -- the samples that can run here (never the skipped ones).
- `skipped(data_dir, **options) -> {task_id: reason}` -- tasks this machine cannot run (live web,
  missing app or media). They are recorded in results.json `subset.skipped` with their reason and
  are never scored 0. Default: none.
- `task(seed=, harness=, **options)` -- one Inspect task per seed. With `--data-dir DIR` the
  runner passes `data_dir=<absolute DIR as str>` among `options` (and to `load`/`skipped`); a
  benchmark that reads external data sets `accepts_data_dir = True`, the others refuse the option
  with a clear error.
- LLM judges: `forge-eval run --judge MODEL` (default: `official.judge_model`) binds the Inspect
  model role `official.judge_role` (e.g. "judge"); scorers call `get_model(role="judge")`.
  `judge_info(judge_model)` returns what identifies the judge setup -- at least `prompt_sha256`,
  and `settings` (temperature, max tokens, ...) -- and is recorded in results.json `judge`, with
  `comparable = False` and a note when the judge is not the official one.
"""

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from inspect_ai import Task
from inspect_ai.dataset import Sample


@dataclass(frozen=True)
class OfficialSettings:
    """The benchmark's own protocol, so that runs are comparable with published numbers.

    Attributes:
        trials: Trials per task in the official protocol; the default of `--epochs` (pass^k / pass@k
            use k <= trials).
        pass_threshold: A trial passes when its score is >= this value.
        message_limit: Messages per trial before the agent is stopped.
        time_limit: Seconds per trial before the agent is stopped.
        graded: Whether scores are graded in [0, 1] (then "mean score" is reported too).
        judge_role: Inspect model role of an LLM judge, if the protocol uses one.
        judge_model: The official judge as an Inspect model string (the default of `--judge`).
        paper_scores: Scores the paper reports for this benchmark, metric name (as in results.json,
            e.g. "success_rate", "pass^3", "mean_score") -> value in [0, 1].
        paper_source: Where `paper_scores` come from (paper, table, model), shown with them.
    """

    trials: int = 1
    pass_threshold: float = 1.0
    message_limit: int | None = None
    time_limit: int | None = None
    graded: bool = False
    judge_role: str | None = None
    judge_model: str | None = None
    paper_scores: Mapping[str, float] = field(default_factory=dict)
    paper_source: str | None = None


class Benchmark(ABC):
    """A benchmark: its data, its Inspect task per seed, and its official settings."""

    name: ClassVar[str]
    description: ClassVar[str]
    default_harness: ClassVar[str] = "react"
    official: ClassVar[OfficialSettings] = OfficialSettings()
    #: Task ids of the quick default subset (the README's first command); None = all tasks.
    quick_subset: ClassVar[tuple[str, ...] | None] = None
    #: Whether the benchmark reads external task data, so `--data-dir` means something to it.
    accepts_data_dir: ClassVar[bool] = False

    def requirements(self) -> list[str]:
        """What is missing to run this benchmark here, one message per item (empty = ready)."""
        return []

    @abstractmethod
    def load(self, data_dir: Path | None = None) -> list[Sample]:
        """The benchmark's runnable samples, from `data_dir` or the benchmark's own source."""

    @abstractmethod
    def task(self, *, seed: int, harness: str, **options: Any) -> Task:
        """One Inspect task for one seed; `seed` must reach the model's sampling."""

    def skipped(self, data_dir: Path | None = None, **options: Any) -> dict[str, str]:
        """Tasks that cannot run here, task id -> reason; reported as skipped, never scored 0."""
        return {}

    def judge_info(self, judge_model: str) -> dict[str, Any]:
        """What identifies the judge setup besides its model: `prompt_sha256`, `settings`, ..."""
        return {}
