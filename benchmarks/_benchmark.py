"""The `Benchmark` interface: what `forge-eval run` needs to know about a benchmark.

A benchmark declares itself as a package (`__init__.py` registers it in `BENCHMARKS` and exports its
public names; `_task.py` its Inspect task, `_data.py` its data, `_scorer.py` its scoring, `README.md`
its protocol) whose entry is a `Benchmark` subclass with:

- `official: OfficialSettings` -- the published protocol. `trials` is the default of `--epochs`
  (printed when defaulted); `judge_role` / `judge_model` name the LLM judge (see below);
  `paper_scores` + `paper_source` are the paper's numbers, written to results.json `reference` and
  shown beside ours in the report.
- `select_function(data_dir=..., **options) -> Selection` -- the tasks a run chooses: the samples that
  can run here and the skipped ones with their reasons (`forge_eval.benchmarks.select` and `SkipRules`
  build it). `load`, `skipped`, the Inspect task and the runner's task count all come from it, called
  with the same options (the options it does not take, such as limits, are left out), so the count of
  chosen tasks is the count of one selection. Skipped tasks are recorded in results.json
  `subset.skipped` and never scored 0; when nothing can run, `NothingRunnableError` (exit 2) says why.
- `task_function(seed=, harness=, **options) -> Task` -- the Inspect `@task` function, one task per
  seed; it ends in `benchmark_task(...)`, which owns the harness lookup, `GenerateConfig(seed=)` and the
  task metadata. Its parameters other than seed and harness are the run's valid `-T` options
  (`task_options`): the runner refuses any other before it creates anything. With `--data-dir DIR`
  the runner passes `data_dir=<absolute DIR as str>` among the options (and to the selection); a
  benchmark that reads external data sets `accepts_data_dir = True`, the others refuse the option with
  a clear error.
- `judge: JudgeSetup | None` -- the LLM judge: `forge-eval run --judge MODEL` (default:
  `official.judge_model`) binds the Inspect model role `official.judge_role`; scorers call the judge
  through the setup. `judge_info(judge_model)` (from the setup: `prompt_sha256`, `settings`) is
  recorded in results.json `judge`, comparable only when the protocol record's judge elements match.
- `protocol(run) -> ProtocolRecord` -- the protocol record in results.json: for every element of the
  official protocol (`forge_eval.rundir.ELEMENTS`), what it uses and what this run used (`RunUsed`,
  read back from the run's logs). `comparable` follows from it. Until a benchmark fills it, the
  default records the judge (model and prompts) and `protocol_pending` (why the record is not
  filled), so the run is marked not comparable with that reason.
- `rollout_environment(task)` -- a task set up outside Inspect for a training rollout of a real harness
  (a `forge_eval.harnesses.TaskEnvironment`); benchmarks without one say so.
"""

import inspect
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from inspect_ai import Task
from inspect_ai.dataset import Sample
from inspect_ai.log import EvalLog

from forge_eval._errors import ForgeError
from forge_eval._registry import Registry
from forge_eval.benchmarks._judge import JudgeSetup
from forge_eval.benchmarks._selection import Selection
from forge_eval.harnesses import TaskEnvironment
from forge_eval.rundir import (
    NotRecorded,
    NotUsed,
    ProtocolElement,
    ProtocolRecord,
    Source,
    Value,
    element,
    sha256_text,
)

#: The generate settings that shape the agent's sampling (`RunUsed.sampling` keeps these): not the
#: seed (it differs by design between seeds), not retries, timeouts or connection limits.
SAMPLING_KEYS = (
    "temperature",
    "top_p",
    "top_k",
    "max_tokens",
    "stop_seqs",
    "best_of",
    "num_choices",
    "frequency_penalty",
    "presence_penalty",
    "logit_bias",
    "system_message",
    "effort",
    "reasoning_effort",
    "reasoning_mode",
    "reasoning_tokens",
    "reasoning_summary",
    "reasoning_history",
    "verbosity",
    "response_schema",
    "extra_body",
)


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
        fractional_success: The benchmark's own success rate is the mean of its (possibly fractional)
            task results: `success_rate` is that mean, the all-or-nothing rate `full_success_rate`.
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
    fractional_success: bool = False
    judge_role: str | None = None
    judge_model: str | None = None
    paper_scores: Mapping[str, float] = field(default_factory=dict)
    paper_source: str | None = None


@dataclass(frozen=True)
class Card:
    """What the benchmark tables (README's and the docs') say of a benchmark: one source for both.

    Attributes:
        runs_here: What runs on a CPU machine like CI's, offline (and with what).
        comparable: When a run is comparable with published numbers.
        needs: What it needs beyond forge-eval's install.
    """

    runs_here: str
    comparable: str
    needs: str


@dataclass(frozen=True)
class RunUsed:
    """What a run used: the "ours" side of the protocol record (`Benchmark.protocol`).

    Attributes:
        harness: The harness name the run used.
        task_args: The Inspect task's arguments as the run's logs record them (defaults included, the
            seed left out): limits, subset, task ids, data dir, ...
        sampling: The agent's generate settings as Inspect applied them at the task level (the task's
            own config merged with the run's, e.g. `--temperature`), `SAMPLING_KEYS` only; {} = the
            model's defaults.
        overrides: The part of `sampling` the run set on top of the task's own settings (`forge-eval
            run --temperature`, a reply cap), as Inspect recorded the eval's generate config.
        judge_model: The model bound to the judge role, if the benchmark has one.
        model_roles: The run's other model roles (`--model-role`), role -> model.
        task_ids: The tasks that ran, sorted.
        skipped: Tasks that could not run here, task id -> reason.
        data_dir: `--data-dir`, if given (absolute).
        limit: `--limit`, if given (only the first tasks ran).
    """

    harness: str
    task_args: Mapping[str, Any] = field(default_factory=dict)
    sampling: Mapping[str, Any] = field(default_factory=dict)
    overrides: Mapping[str, Any] = field(default_factory=dict)
    judge_model: str | None = None
    model_roles: Mapping[str, str] = field(default_factory=dict)
    task_ids: tuple[str, ...] = ()
    skipped: Mapping[str, str] = field(default_factory=dict)
    data_dir: Path | None = None
    limit: int | None = None

    @property
    def selection(self) -> str:
        """Which tasks the run asked for, in words (for `task_set` labels)."""
        if self.task_args.get("task_ids"):
            chosen = "listed task ids"
        elif self.task_args.get("subset") not in (None, "all"):
            chosen = f"subset {self.task_args['subset']}"
        else:
            chosen = "all"
        return chosen + (f", first {self.limit}" if self.limit else "")

    def task_set_element(self, official: Source, *, note: str | None = None) -> ProtocolElement:
        """The `task_set` element every benchmark records: the official task set (a `task_set(...)`, or
        why it is not recorded) against the tasks this run chose."""
        return element("task_set", official, task_set(self.task_ids, self.selection), note=note)


def task_set(ids: Any, label: str) -> Value:
    """A task set as a protocol value: how many tasks and a hash of their sorted ids (two sets are the
    same only when they hold the same ids); `label` says in words which selection it is."""
    ordered = sorted(str(i) for i in ids)
    return Value(
        value={"n": len(ordered), "ids_sha256": sha256_text("\n".join(ordered))},
        label=f"{label}: {len(ordered)} tasks",
    )


def own_elements(
    run: RunUsed, all_ids: Iterable[Any], max_tokens: int, no_judge: str
) -> dict[str, ProtocolElement]:
    """The elements our own benchmarks (forgelab, weblab) record alike, by kind: the task set (all tasks
    vs the run's selection), the agent's sampling (the task's reply cap, the model's defaults otherwise)
    and the judge elements of a benchmark scored without one (`no_judge` says what scores instead)."""
    label = f"max_tokens {max_tokens}, the model's defaults otherwise"
    sampling = Value(value={"max_tokens": max_tokens}, label=label)
    not_used = NotUsed(why=no_judge)
    return {
        "task_set": run.task_set_element(task_set(all_ids, "all")),
        "agent_sampling": element("agent_sampling", sampling, Value(value=dict(run.sampling))),
        "judge_model": element("judge_model", not_used),
        "judge_prompt": element("judge_prompt", not_used),
    }


#: Task arguments the runner passes itself (`Benchmark.task(seed=, harness=)`), never as task options:
#: each names the `forge-eval run` option that sets it.
RUN_SET_OPTIONS: Mapping[str, str] = {"seed": "--seeds and --seed-base", "harness": "--harness"}


class Benchmark:
    """A benchmark: the tasks a run chooses, its Inspect task per seed, and its official settings."""

    name: ClassVar[str]
    description: ClassVar[str]
    default_harness: ClassVar[str] = "react"
    official: ClassVar[OfficialSettings] = OfficialSettings()
    #: Task ids of the quick default subset (the README's first command); None = all tasks.
    quick_subset: ClassVar[tuple[str, ...] | None] = None
    #: The benchmark's row in README's and the docs' tables (`benchmark_table`).
    card: ClassVar[Card]
    #: What one sample needs on a cluster node beyond a CPU (`desktop`, `browser`, `sandbox` slots): a
    #: shard runs only on a node advertising them (`ray start --resources`), one such sample at a time.
    resources: ClassVar[Mapping[str, float]] = {}
    #: Whether the benchmark reads external task data, so `--data-dir` means something to it.
    accepts_data_dir: ClassVar[bool] = False
    #: The tasks a run chooses: `(data_dir=..., **options) -> Selection` (module doc).
    select_function: ClassVar[Callable[..., Selection]]
    #: The Inspect task function: `(seed=, harness=, **options) -> Task` (module doc).
    task_function: ClassVar[Callable[..., Task]]
    #: The LLM judge, for benchmarks scored by one.
    judge: ClassVar[JudgeSetup | None] = None
    #: Why the protocol record is not filled yet (shown as the reason the run is not comparable); a
    #: benchmark that fills `protocol()` does not use it.
    protocol_pending: ClassVar[str] = (
        "protocol record not yet filled: whether the prompts, sampling, grader and environment are the "
        "official ones has not been checked"
    )

    def requirements(self) -> list[str]:
        """What is missing to run this benchmark here, one message per item (empty = ready)."""
        return []

    def selection(self, data_dir: Path | None = None, **options: Any) -> Selection:
        """The tasks these options choose: runnable samples and skipped tasks with their reasons.

        Options the selection function does not take (limits, judge settings) are left out, so the
        runner can pass every task option here and to `task`.
        """
        chooser = type(self).select_function  # a plain function held by the class: never bound
        return chooser(data_dir=data_dir, **_accepted(chooser, options))

    def load(self, data_dir: Path | None = None, **options: Any) -> list[Sample]:
        """The chosen samples that can run here; `NothingRunnableError` when there are none."""
        return self.selection(data_dir, **options).runnable(self.name)

    def skipped(self, data_dir: Path | None = None, **options: Any) -> dict[str, str]:
        """Chosen tasks that cannot run here, task id -> reason; reported as skipped, never scored 0."""
        return dict(self.selection(data_dir, **options).skipped)

    def task(self, *, seed: int, harness: str, **options: Any) -> Task:
        """One Inspect task for one seed; `seed` must reach the model's sampling."""
        return type(self).task_function(seed=seed, harness=harness, **options)

    def task_options(self) -> list[str] | None:
        """The options `task` takes (`forge-eval run -T KEY=VALUE`), read from the task function's
        signature so that they never drift from it; seed and harness are left out (the run sets them).
        None when the function takes **kwargs (any option)."""
        names = _parameters(type(self).task_function)
        return None if names is None else [n for n in names if n not in RUN_SET_OPTIONS]

    def judge_info(self, judge_model: str) -> dict[str, Any]:
        """What identifies the judge setup besides its model: `prompt_sha256`, `settings`, ..."""
        return self.judge.info() if self.judge is not None else {}

    async def rollout_environment(self, task: dict[str, Any]) -> TaskEnvironment:
        """Task `task["task_id"]` set up for a training rollout of a real harness (world, tools, prompt,
        grader). Benchmarks that can do it override this; the others refuse with the reason."""
        raise ForgeError(
            f"benchmark {self.name!r} cannot set up tasks for training rollouts: "
            "it has no rollout_environment()",
            hint="forgelab has one; other benchmarks run in training through a task `command`",
        )

    def upstream_metrics(
        self, logs: list[EvalLog], ours: Mapping[str, Mapping[str, Any]], data_dir: Path | None
    ) -> dict[str, dict[str, Any]]:
        """Headline metrics that the benchmark's own upstream code computes from the run's logs, in
        results.json's shape (`MetricResult`); each replaces forge-eval's metric of that name (`ours`).
        None by default."""
        return {}

    def protocol(self, run: RunUsed) -> ProtocolRecord:
        """The protocol record of a run: every element's official and used side (`forge_eval.rundir`).

        This default is for benchmarks whose record is not filled yet: it records the agent's sampling
        and the judge (model and prompts) as this run used them, and marks the run not comparable with
        `protocol_pending` as the reason.
        """
        unknown = NotRecorded(why="this benchmark's protocol record is not filled yet")
        elements = [element("agent_sampling", unknown, Value(value=dict(run.sampling)))]
        if self.judge is not None:
            elements += self.judge.elements(self.official.judge_model, run.judge_model)
        elif self.official.judge_role is not None:
            declared = self.official.judge_model
            official = Value(value=declared, label=declared or "none declared")
            elements.append(element("judge_model", official, Value(value=run.judge_model)))
        return ProtocolRecord(elements=elements, pending=self.protocol_pending)


#: Every benchmark by name; each benchmark package registers its entry when imported, and importing
#: `forge_eval.benchmarks` imports them all.
BENCHMARKS: Registry[Benchmark] = Registry("benchmark")


def _parameters(function: Callable[..., Any]) -> list[str] | None:
    """The names `function` takes by keyword, in order; None when it takes **kwargs (any name)."""
    parameters = inspect.signature(function).parameters.values()
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
        return None
    by_name = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    return [p.name for p in parameters if p.kind in by_name]


def _accepted(function: Callable[..., Any], options: dict[str, Any]) -> dict[str, Any]:
    """The options `function` takes by name (all of them when it takes **kwargs)."""
    names = _parameters(function)
    return dict(options) if names is None else {k: v for k, v in options.items() if k in names}


def benchmark_table(link: Callable[[str], str], described: bool = False) -> str:
    """The table of every benchmark forge-eval ships from its `card` (Markdown), each name linked by
    `link(name)`; with `described`, a column with the benchmark's description."""
    head = ["benchmark", *(["what it measures"] if described else []), "runs here (CPU, offline)"]
    head += ["comparable with published numbers", "needs"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name in BENCHMARKS.names():
        entry = BENCHMARKS.get(name)
        if not type(entry).__module__.startswith("forge_eval.benchmarks."):
            continue  # registered by a plugin or a test, not shipped with forge-eval
        card = type(entry).card
        cells = [f"[{name}]({link(name)})", *([entry.description] if described else [])]
        cells += [card.runs_here, card.comparable, card.needs]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"
