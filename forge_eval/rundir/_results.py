"""The `results.json` contract: one schema, written by `forge-eval run`, read by the report.

`RunResults` is the whole file as pydantic models. The runner builds one and calls `write_results`;
the report calls `load_results`, which validates the file and, on failure, lists every problem at
once (one message tells the user all that is wrong instead of one field per attempt).

Optional blocks (absent or null when they do not apply): `protocol` (the protocol record: for every
element of the benchmark's official protocol, what it uses, what this run used, and whether the run
is `comparable`; see `_protocol.py`), `judge` (the LLM judge of the scores: model, role, prompt hash,
settings, and whether it is the official judge setup), `subset` (how many of the benchmark's tasks
ran, and which were skipped here and why), `reference` (the paper's scores for this benchmark),
`harnesses` (a harness-matrix run's per-harness section; absent from a single-harness run's file).
`noise_floor` (verdict flips across seeds and the minimum detectable difference of a paired
comparison, `forge_eval.analysis.noise_floor`), `coverage` (trials scored / attempted, failures by
message), `cost` (calls, tokens and wall time over every attempt, `forge_eval.analysis.cost_summary`).
Unknown top-level fields are kept and shown as recorded, so a newer runner's additions survive an
older report.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PrivateAttr,
    SerializerFunctionWrapHandler,
    ValidationError,
    model_serializer,
)
from pydantic_core import PydanticCustomError

from forge_eval._errors import ForgeError
from forge_eval._files import write_json
from forge_eval.rundir._paths import RunDir
from forge_eval.rundir._protocol import ProtocolRecord

_REGENERATE_HINT = (
    "results.json is written by `forge-eval run <benchmark> --out DIR`; run that command "
    "(re-running the same command resumes and keeps finished trials)"
)


def _fraction(value: float | None) -> float | None:
    """A value in [0, 1]; null (or NaN) stands for "could not be estimated" and is shown as n/a."""
    if value is None or math.isnan(value):
        return None
    if not 0.0 <= value <= 1.0:
        raise PydanticCustomError("outside_range", "{value} is outside [0, 1]", {"value": value})
    return float(value)


def _level(value: float) -> float:
    if not 0.0 < value < 1.0:
        raise PydanticCustomError("outside_range", "{value} is outside (0, 1)", {"value": value})
    return value


def _integers(value: Any) -> Any:
    if not isinstance(value, list) or not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        raise PydanticCustomError("integer_list", "must be a list of integers")
    return value


Fraction = Annotated[float | None, AfterValidator(_fraction)]
Integers = Annotated[list[int], BeforeValidator(_integers)]


class _Model(BaseModel):
    # Strict: "3" is not an integer and true is not a number; results.json is written by code.
    model_config = ConfigDict(strict=True, extra="allow", protected_namespaces=())


class SeedEstimate(_Model):
    """A metric's estimate from the trials of one seed."""

    seed: int
    estimate: Fraction


class MetricResult(_Model):
    """One headline metric: the pooled estimate, its CI and the per-seed estimates.

    `name` is the metric's key in `metrics` (filled in on load, not written inside the object).
    """

    name: str = Field(default="", exclude=True)
    estimate: Fraction
    ci_low: Fraction
    ci_high: Fraction
    per_seed: list[SeedEstimate]
    n_tasks: int
    n_trials: int
    estimator: str
    confidence_level: Annotated[float, AfterValidator(_level)] = 0.95
    standard_error: float | None = None


class JudgeInfo(_Model):
    """The LLM judge behind the scores; `comparable` is True only when the judge model and every judge
    prompt are the official ones (the protocol record's judge elements all match)."""

    model: str
    role: str
    prompt_sha256: str | None = None
    settings: dict[str, Any] = Field(default_factory=dict)
    comparable: bool
    note: str | None = None


class SkippedTask(_Model):
    task_id: str
    reason: str


class SubsetInfo(_Model):
    """Which of the benchmark's tasks ran: skipped ones are listed with a reason, never scored 0."""

    n_total: int
    n_run: int
    skipped: list[SkippedTask] = Field(default_factory=list)


class ReferenceScores(_Model):
    """Scores the paper reports for this benchmark (metric name -> value), and where from."""

    scores: dict[str, float]
    source: str | None = None


class HarnessMatrix(_Model):
    """A harness-matrix run (`forge-eval run BENCH --harness a,b,...`): per harness its run directory and
    numbers, per pair of harnesses their paired differences (`forge_eval.analysis.harness_matrix`).
    A single-harness run's results.json has no such section."""

    baseline: str = Field(description="the first harness: the run's headline, `log_dir` and trials are its")
    order: list[str] = Field(description="the harnesses in the order `--harness` named them")
    runs: dict[str, dict[str, Any]] = Field(
        description="per harness: `run_dir` (relative), `status`, `metrics` (as in its results.json), "
        "`capabilities` (0-100 with intervals), `usage` (calls and tokens per task), `model_turns`"
    )
    pairs: list[dict[str, Any]] = Field(
        description="per pair, the later harness `b` minus the earlier `a` on shared task x seed cells: "
        "`metrics`, `step_budgets`, `capabilities` and `usage` differences with 95% intervals, `matching`, "
        "`protocol_differences`"
    )
    step_budgets: Integers = Field(description="the matched step budgets (model turns) of the pairs")
    estimator: str = Field(description="how the numbers were estimated, in words")


class RunResults(_Model):
    """The contents of `results.json`."""

    benchmark: str
    model: str
    harness: str
    seeds: Integers
    epochs: int
    status: Literal["complete", "partial"]
    metrics: dict[str, MetricResult]
    threshold: float | None = None
    n_tasks: int | None = None
    versions: dict[str, str] = Field(default_factory=dict)
    git_revision: str | None = None
    command: str | None = None
    created: str | None = None
    log_dir: str = RunDir.LOGS
    task_options: dict[str, Any] = Field(default_factory=dict)
    model_base_url: str | None = None
    data_dir: str | None = None
    deterministic: bool = False
    protocol: ProtocolRecord | None = None
    judge: JudgeInfo | None = None
    subset: SubsetInfo | None = None
    reference: ReferenceScores | None = None
    noise_floor: dict[str, Any] | None = None
    coverage: dict[str, Any] | None = None
    cost: dict[str, Any] | None = None
    harnesses: HarnessMatrix | None = None

    _run_dir: Path = PrivateAttr(default=Path("."))

    def model_post_init(self, context: Any) -> None:
        for name, metric in self.metrics.items():
            metric.name = name

    @model_serializer(mode="wrap")
    def _without_absent_matrix(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """A single-harness run's results.json has no `harnesses` key at all: its schema stays the one it
        had before harness matrices existed."""
        data = handler(self)
        if self.harnesses is None:
            data.pop("harnesses", None)
        return data

    def at(self, run_dir: Path) -> RunResults:
        """Bind these results to the run directory they were read from (paths resolve against it)."""
        self._run_dir = run_dir
        return self

    @property
    def run_dir(self) -> Path:
        return self._run_dir

    @property
    def logs_path(self) -> Path:
        """The run's Inspect log directory, absolute."""
        return (self._run_dir / self.log_dir).resolve()

    @property
    def comparable(self) -> bool:
        """Whether this run followed the benchmark's official protocol in every element (a run
        without a protocol record, from an older forge-eval, is not known to be)."""
        return self.protocol is not None and bool(self.protocol.comparable)

    @property
    def partial(self) -> bool:
        return self.status != "complete"

    @property
    def metric_list(self) -> tuple[MetricResult, ...]:
        """The metrics in display order (see `metric_order`)."""
        return tuple(sorted(self.metrics.values(), key=lambda m: metric_order(m.name)))

    @property
    def extra(self) -> dict[str, Any]:
        """Recorded options and fields this version does not know, shown as recorded."""
        recorded = {
            key: getattr(self, key)
            for key in ("task_options", "model_base_url", "data_dir")
            if getattr(self, key)
        }
        return {**recorded, **(self.model_extra or {})}


def write_results(run_dir: str | os.PathLike[str], results: RunResults) -> Path:
    """Write `run_dir/results.json` (atomically: a crash never leaves a torn file)."""
    return write_json(RunDir(run_dir).results, results)


def load_results(run_dir: str | os.PathLike[str]) -> RunResults:
    """Load and validate `run_dir/results.json`.

    Raises:
        ForgeError: the file is missing, is not JSON, or lacks/mistypes fields; the message lists
            every problem and the hint names the command that writes the file.
    """
    run_dir = Path(run_dir)
    path = RunDir(run_dir).results
    if not path.is_file():
        raise ForgeError(f"no {path.name} in run directory {run_dir}", _REGENERATE_HINT)
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise ForgeError(f"{path} is not valid JSON: {e}", _REGENERATE_HINT) from None
    if not isinstance(raw, dict):
        raise ForgeError(f"{path} must hold a JSON object, got {type(raw).__name__}", _REGENERATE_HINT)
    try:
        return RunResults.model_validate(raw).at(run_dir)
    except ValidationError as e:
        listing = "; ".join(problems(e))
        raise ForgeError(f"{path} is invalid: {listing}", _REGENERATE_HINT) from None


_KINDS = {
    "string_type": "a string",
    "int_type": "an integer",
    "int_parsing": "an integer",
    "float_type": "a number",
    "bool_type": "true or false",
    "dict_type": "an object",
    "model_type": "an object",
    "model_attributes_type": "an object",
    "list_type": "a list",
}


def problems(error: ValidationError) -> list[str]:
    """Each validation error as one line naming the field path (e.g. 'metrics.pass@2.ci_high')."""
    lines = []
    for item in error.errors():
        where = _path(item["loc"])
        value = item.get("input")
        kind = item["type"]
        if kind == "missing":
            lines.append(f"'{where}' is missing")
        elif kind == "outside_range":
            lines.append(f"'{where}' = {item['msg']}")
        elif kind == "literal_error":
            expected = item["ctx"]["expected"].replace("'", '"')
            lines.append(f"'{where}' must be {expected}, got {value!r}")
        elif kind == "integer_list":
            lines.append(f"'{where}' must be a list of integers, got {_short(value)}")
        elif kind in _KINDS:
            lines.append(f"'{where}' must be {_KINDS[kind]}, got {_short(value)}")
        else:
            lines.append(f"'{where}': {item['msg']}")
    return lines


def _path(loc: tuple[int | str, ...]) -> str:
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else f".{part}" if text else str(part)
    return text


def _short(value: Any) -> str:
    try:
        return json.dumps(value)[:60]
    except (TypeError, ValueError):
        return repr(value)[:60]


def metric_order(name: str) -> tuple[int, int, str]:
    """Sort key: success rate, pass@k by k, pass^k by k, mean score, then any other metric by name."""
    for rank, prefix in ((1, "pass@"), (2, "pass^")):
        if name.startswith(prefix) and name[len(prefix) :].isdigit():
            return (rank, int(name[len(prefix) :]), name)
    fixed = {"success_rate": 0, "mean_score": 3}
    return (fixed.get(name, 4), 0, name)
