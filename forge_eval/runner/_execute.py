"""`forge-eval run`: one Inspect task per seed through eval_set, then results.json, trials.csv, report."""

import json
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from inspect_ai import eval_set

from forge_eval._errors import ForgeError, UsageError
from forge_eval.analysis import read_run_logs, summarize_trials, trials_table
from forge_eval.benchmarks import BENCHMARKS, Benchmark
from forge_eval.harnesses import HARNESSES
from forge_eval.runner._model import resolved_model
from forge_eval.runner._provenance import git_revision, versions
from forge_eval.runner._spec import RunSpec

_IDENTITY_KEYS = ("benchmark", "harness", "model", "epochs", "limit", "quick", "task_options", "temperature")
_METADATA_COLUMNS = ("difficulty", "category")


@dataclass(frozen=True)
class RunResult:
    """Where a finished (or partial) run left its outputs, and its summary."""

    out: Path
    results: dict[str, Any]
    report: Path | None

    @property
    def complete(self) -> bool:
        return self.results["status"] == "complete"


def _identity(spec: RunSpec, harness: str) -> dict[str, Any]:
    fields = asdict(spec)
    fields["harness"] = harness
    return {k: fields[k] for k in _IDENTITY_KEYS}


def _claim_run_dir(spec: RunSpec, harness: str) -> None:
    """Refuse to mix two different runs in one directory; a re-run of the same run resumes it."""
    spec.out.mkdir(parents=True, exist_ok=True)
    marker = spec.out / "run.json"
    identity = _identity(spec, harness)
    if marker.exists():
        previous = json.loads(marker.read_text())
        if previous.get("identity") != identity:
            changed = sorted(k for k in identity if previous.get("identity", {}).get(k) != identity[k])
            raise UsageError(
                f"{spec.out} already holds a different run (differs in: {', '.join(changed)})",
                hint="use another --out directory, or repeat the original command to resume that run",
            )
        seeds = sorted(set(previous.get("seeds", [])) | set(spec.seeds))
    else:
        seeds = sorted(spec.seeds)
    marker.write_text(json.dumps({"identity": identity, "seeds": seeds}, indent=2))


def _task_options(spec: RunSpec, benchmark: Benchmark) -> dict[str, Any]:
    options = dict(spec.task_options)
    if spec.quick:
        if benchmark.quick_subset is None:
            raise UsageError(f"benchmark '{benchmark.name}' has no quick subset; drop --quick")
        options["task_ids"] = ",".join(benchmark.quick_subset)
    return options


def _check_requirements(benchmark: Benchmark, harness_name: str) -> None:
    missing = benchmark.requirements() + HARNESSES.get(harness_name).requirements()
    if missing:
        raise ForgeError(
            f"cannot run '{benchmark.name}' with harness '{harness_name}' here:\n  - "
            + "\n  - ".join(missing)
        )


def run_benchmark(spec: RunSpec, display: str | None = None) -> RunResult:
    """Run `spec` (resuming whatever an earlier, interrupted run of it finished) and summarize it."""
    if not spec.seeds:
        raise UsageError("a run needs at least one seed (--seeds N with N >= 1)")
    if spec.epochs < 1:
        raise UsageError(f"--epochs must be >= 1, got {spec.epochs}")
    benchmark = BENCHMARKS.get(spec.benchmark)
    harness = spec.harness or benchmark.default_harness
    HARNESSES.get(harness)
    _check_requirements(benchmark, harness)
    options = _task_options(spec, benchmark)
    _claim_run_dir(spec, harness)

    generate: dict[str, Any] = {}
    if spec.temperature is not None:
        generate["temperature"] = spec.temperature
    with resolved_model(spec.model, spec.model_base_url, spec.model_args) as model:
        tasks = [benchmark.task(seed=seed, harness=harness, **options) for seed in spec.seeds]
        max_connections = spec.max_connections or (2 if model.embedded else None)
        eval_set(
            tasks,
            log_dir=str(spec.log_dir),
            model=model.inspect_model,
            model_base_url=model.base_url,
            model_args=model.model_args,
            epochs=spec.epochs,
            limit=spec.limit,
            max_tasks=len(tasks),
            max_connections=max_connections,
            retry_attempts=2,
            retry_wait=1,
            # The embedded server marks unparseable tool calls in its raw responses; behavioral
            # analysis (format robustness) reads them, and Inspect keeps raw calls only when asked.
            log_model_api=model.embedded,
            display=display,
            **generate,
        )
    return summarize_run(spec, benchmark, harness, model.label)


def summarize_run(spec: RunSpec, benchmark: Benchmark, harness: str, model_label: str) -> RunResult:
    """Read the run's logs and write results.json, trials.csv and report.html."""
    from forge_eval.reports import build_report

    logs = [log for log in read_run_logs(spec.log_dir) if log.eval.task_args.get("seed") in spec.seeds]
    official = benchmark.official
    table = trials_table(logs, official.pass_threshold, metadata_keys=_METADATA_COLUMNS)
    if table.empty:
        raise ForgeError(
            f"the run produced no scored samples in {spec.log_dir}",
            hint="check the logs with `inspect view --log-dir " + str(spec.log_dir.resolve()) + "`",
        )
    metrics = summarize_trials(table, epochs=spec.epochs, graded=official.graded)
    complete = all(log.status == "success" for log in logs) and {
        log.eval.task_args.get("seed") for log in logs
    } >= set(spec.seeds)
    results = {
        "benchmark": benchmark.name,
        "model": model_label,
        "harness": harness,
        "seeds": list(spec.seeds),
        "epochs": spec.epochs,
        "threshold": official.pass_threshold,
        "n_tasks": int(table["task_id"].nunique()),
        "status": "complete" if complete else "partial",
        "versions": versions(),
        "git_revision": git_revision(),
        "command": spec.command,
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "log_dir": "logs",
        "task_options": spec.task_options,
        "metrics": {name: summary.to_dict() for name, summary in metrics.items()},
    }
    (spec.out / "results.json").write_text(json.dumps(results, indent=2))
    table.drop(columns=["log_file"]).to_csv(spec.out / "trials.csv", index=False)
    return RunResult(spec.out, results, build_report(spec.out))
