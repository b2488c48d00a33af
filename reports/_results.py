"""Read and validate `DIR/results.json`, the run summary written by `forge-eval run`.

Validation collects every problem before failing, so one message tells the user all that is wrong
with the file instead of one field per attempt.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from forge_eval._errors import ForgeError

RESULTS_FILE = "results.json"
_REGENERATE_HINT = (
    "results.json is written by `forge-eval run <benchmark> --out DIR`; run that command "
    "(re-running the same command resumes and keeps finished trials)"
)


@dataclass(frozen=True)
class SeedEstimate:
    """A metric's estimate from the trials of one seed."""

    seed: int
    estimate: float | None


@dataclass(frozen=True)
class MetricResult:
    """One headline metric: the pooled estimate, its 95% CI and the per-seed estimates."""

    name: str
    estimate: float | None
    ci_low: float | None
    ci_high: float | None
    per_seed: tuple[SeedEstimate, ...]
    n_tasks: int
    n_trials: int
    estimator: str
    confidence_level: float = 0.95
    standard_error: float | None = None


@dataclass(frozen=True)
class RunResults:
    """The validated contents of `results.json`; `log_dir` is absolute."""

    run_dir: Path
    benchmark: str
    model: str
    harness: str
    seeds: tuple[int, ...]
    epochs: int
    status: str
    metrics: tuple[MetricResult, ...]
    log_dir: Path
    threshold: float | None = None
    versions: dict[str, str] = field(default_factory=dict)
    git_revision: str | None = None
    command: str | None = None
    created: str | None = None
    n_tasks: int | None = None
    # Top-level fields this version does not know (e.g. task options); shown as recorded.
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def partial(self) -> bool:
        return self.status != "complete"


_KNOWN_FIELDS = frozenset(
    {"benchmark", "model", "harness", "seeds", "epochs", "threshold", "versions", "git_revision", "command"}
    | {"created", "log_dir", "n_tasks", "status", "metrics"}
)


class _Checker:
    """Typed field access on a JSON object that records problems instead of raising at the first."""

    def __init__(self) -> None:
        self.problems: list[str] = []

    def get(self, obj: dict[str, Any], key: str, where: str, kind: str, required: bool = True) -> Any:
        label = f"{where}{key}"
        if key not in obj or (obj[key] is None and not required):
            if required:
                self.problems.append(f"'{label}' is missing")
            return None
        value = obj[key]
        if not _is_kind(value, kind):
            self.problems.append(f"'{label}' must be {kind}, got {json.dumps(value)[:60]}")
            return None
        return value

    def fraction(self, obj: dict[str, Any], key: str, where: str) -> float | None:
        """A value in [0, 1]; null stands for "could not be estimated" and is shown as n/a."""
        value = self.get(obj, key, where, "a number", required=False)
        if key not in obj:
            self.problems.append(f"'{where}{key}' is missing")
        if value is None or math.isnan(value):
            return None
        if not 0.0 <= value <= 1.0:
            self.problems.append(f"'{where}{key}' = {value} is outside [0, 1]")
            return None
        return float(value)


def _is_kind(value: Any, kind: str) -> bool:
    is_int = isinstance(value, int) and not isinstance(value, bool)
    checks = {
        "a string": isinstance(value, str),
        "an integer": is_int,
        "a number": is_int or isinstance(value, float),
        "an object": isinstance(value, dict),
        "a list": isinstance(value, list),
        "a list of integers": isinstance(value, list)
        and all(isinstance(v, int) and not isinstance(v, bool) for v in value),
    }
    return checks[kind]


def _metric(check: _Checker, name: str, raw: Any) -> MetricResult | None:
    where = f"metrics.{name}."
    if not isinstance(raw, dict):
        check.problems.append(f"'metrics.{name}' must be an object")
        return None
    per_seed: list[SeedEstimate] = []
    for i, entry in enumerate(check.get(raw, "per_seed", where, "a list") or []):
        item_where = f"{where}per_seed[{i}]."
        if not isinstance(entry, dict):
            check.problems.append(f"'{item_where[:-1]}' must be an object")
            continue
        seed = check.get(entry, "seed", item_where, "an integer")
        if seed is not None:
            per_seed.append(SeedEstimate(seed, check.fraction(entry, "estimate", item_where)))
    return MetricResult(
        name=name,
        estimate=check.fraction(raw, "estimate", where),
        ci_low=check.fraction(raw, "ci_low", where),
        ci_high=check.fraction(raw, "ci_high", where),
        per_seed=tuple(per_seed),
        n_tasks=check.get(raw, "n_tasks", where, "an integer") or 0,
        n_trials=check.get(raw, "n_trials", where, "an integer") or 0,
        estimator=check.get(raw, "estimator", where, "a string") or "",
        confidence_level=_level(check, raw, where),
        standard_error=check.get(raw, "standard_error", where, "a number", required=False),
    )


def _level(check: _Checker, raw: dict[str, Any], where: str) -> float:
    level = check.get(raw, "confidence_level", where, "a number", required=False)
    if level is None:
        return 0.95
    if not 0.0 < level < 1.0:
        check.problems.append(f"'{where}confidence_level' = {level} is outside (0, 1)")
    return float(level)


def load_results(run_dir: Path) -> RunResults:
    """Load `run_dir/results.json`.

    Raises:
        ForgeError: the file is missing, is not JSON, or lacks/mistypes fields; the message lists
            every problem and the hint names the command that writes the file.
    """
    path = run_dir / RESULTS_FILE
    if not path.is_file():
        raise ForgeError(f"no {RESULTS_FILE} in run directory {run_dir}", _REGENERATE_HINT)
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise ForgeError(f"{path} is not valid JSON: {e}", _REGENERATE_HINT) from None
    if not isinstance(raw, dict):
        raise ForgeError(f"{path} must hold a JSON object, got {type(raw).__name__}", _REGENERATE_HINT)

    check = _Checker()
    text = {key: check.get(raw, key, "", "a string") for key in ("benchmark", "model", "harness", "status")}
    seeds = check.get(raw, "seeds", "", "a list of integers")
    epochs = check.get(raw, "epochs", "", "an integer")
    raw_metrics = check.get(raw, "metrics", "", "an object") or {}
    metrics = [_metric(check, name, value) for name, value in raw_metrics.items()]
    versions = check.get(raw, "versions", "", "an object", required=False) or {}
    log_dir = check.get(raw, "log_dir", "", "a string", required=False) or "logs"
    threshold = check.get(raw, "threshold", "", "a number", required=False)
    optional = {
        key: check.get(raw, key, "", "a string", required=False)
        for key in ("git_revision", "command", "created")
    }
    n_tasks = check.get(raw, "n_tasks", "", "an integer", required=False)
    if text["status"] is not None and text["status"] not in ("complete", "partial"):
        check.problems.append(f'\'status\' must be "complete" or "partial", got {text["status"]!r}')
    if check.problems:
        listing = "; ".join(check.problems)
        raise ForgeError(f"{path} is invalid: {listing}", _REGENERATE_HINT)

    return RunResults(
        run_dir=run_dir,
        benchmark=text["benchmark"],
        model=text["model"],
        harness=text["harness"],
        seeds=tuple(seeds),
        epochs=epochs,
        status=text["status"],
        metrics=tuple(sorted((m for m in metrics if m is not None), key=lambda m: metric_order(m.name))),
        log_dir=(run_dir / log_dir).resolve(),
        threshold=None if threshold is None else float(threshold),
        versions={str(k): str(v) for k, v in versions.items()},
        n_tasks=n_tasks,
        extra={key: value for key, value in raw.items() if key not in _KNOWN_FIELDS},
        **optional,
    )


def metric_order(name: str) -> tuple[int, int, str]:
    """Sort key: success rate, pass@k by k, pass^k by k, mean score, then any other metric by name."""
    for rank, prefix in ((1, "pass@"), (2, "pass^")):
        if name.startswith(prefix) and name[len(prefix) :].isdigit():
            return (rank, int(name[len(prefix) :]), name)
    fixed = {"success_rate": 0, "mean_score": 3}
    return (fixed.get(name, 4), 0, name)
