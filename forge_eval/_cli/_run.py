"""What `forge-eval run` does: a benchmark over several seeds, with CIs and a report."""

import shlex
import sys
from dataclasses import replace
from pathlib import Path

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from forge_eval._cli._dry_run import show_dry_run
from forge_eval._cli._options import parse_key_values, parse_model_roles
from forge_eval._cli._report import percent, write_step_budgets
from forge_eval._errors import ForgeError, UsageError
from forge_eval.analysis import parse_budgets
from forge_eval.models import EMBEDDED_MODELS
from forge_eval.rundir import RunDir
from forge_eval.runner import (
    MatrixPlan,
    RunResult,
    RunSpec,
    execute,
    execute_matrix,
    execute_sharded,
    harness_names,
    plan_matrix,
    plan_run,
)
from forge_eval.runner.executors import executor_for

# Measured with bench/quickstart_time.py --deterministic (README, Quick start).
DETERMINISTIC_COST = "about 5x the time (the quick-start run: 23 min against 5 min on 2 idle cores)"


def run(
    benchmark: str,
    seeds: int,
    seed_base: int,
    epochs: int | None,
    model: str | None,
    model_base_url: str | None,
    model_args: tuple[str, ...],
    harness: str | None,
    limit: int | None,
    quick: bool,
    temperature: float | None,
    max_tokens: int | None,
    max_connections: int | None,
    out: Path | None,
    judge: str | None,
    model_roles: tuple[str, ...],
    data_dir: Path | None,
    deterministic: bool,
    no_sandbox: bool,
    shared_run_dir: bool,
    allow_modified_tree: bool,
    step_budget: str | None,
    cluster: str | None,
    shards: int | None,
    shared_logs: bool,
    dry_run: bool,
    as_json: bool,
    task_args: tuple[str, ...],
) -> None:
    """`forge-eval run` (its options and help: forge_eval/_cli/run.py)."""
    budgets = parse_budgets(step_budget) if step_budget else ()
    if not cluster and (shards or shared_logs):
        flag = "--shards" if shards else "--shared-logs"
        hint = "add --cluster (or set FORGE_CLUSTER), or drop it"
        raise UsageError(f"{flag} applies to a run on a cluster", hint)
    if as_json and not dry_run:
        raise UsageError("--json applies to --dry-run", "add --dry-run, or drop --json")

    names = harness_names(harness)
    spec = RunSpec(
        benchmark=benchmark,
        seeds=tuple(range(seed_base, seed_base + seeds)),
        epochs=epochs,
        model=model,
        harness=names[0] if len(names) == 1 else None,
        limit=limit,
        quick=quick,
        task_options=parse_key_values(task_args, "-T"),
        model_base_url=model_base_url,
        model_args=parse_key_values(model_args, "-M"),
        temperature=temperature,
        max_tokens=max_tokens,
        max_connections=max_connections,
        judge=judge,
        model_roles=parse_model_roles(model_roles),
        data_dir=data_dir,
        deterministic=deterministic,
        no_sandbox=no_sandbox,
        shared_run_dir=shared_run_dir,
        allow_modified_tree=allow_modified_tree,
        out=out or Path("runs") / benchmark,
        command=shlex.join(["forge-eval", *sys.argv[1:]]),
    )
    if dry_run:
        harnesses = RunDir(spec.out).harnesses
        specs = [replace(spec, harness=name, out=harnesses / name) for name in names] if names[1:] else [spec]
        show_dry_run(specs, cluster, shards, shared_logs, as_json)
        return
    if len(names) > 1:
        _run_matrix(plan_matrix(spec, names), cluster, shards, shared_logs, budgets)
        return
    plan = plan_run(spec)
    if no_sandbox:
        _warn_no_sandbox()
    for note in plan.notes:
        click.echo(note)
    result = execute_sharded(plan, executor_for(cluster, shared_logs), shards) if cluster else execute(plan)
    if budgets:
        write_step_budgets(result.out, budgets)
    print_headline(result.results, result.out, result.report)
    _closing_notes(result, benchmark, quick or bool(limit))


def _run_matrix(
    matrix: MatrixPlan, cluster: str | None, shards: int | None, shared_logs: bool, budgets: tuple[int, ...]
) -> None:
    """`--harness a,b,...`: the same tasks and seeds under each harness, one run directory per harness."""
    if matrix.spec.no_sandbox:
        _warn_no_sandbox()
    for note in matrix.notes:
        click.echo(note)
    executor = executor_for(cluster, shared_logs) if cluster else None
    result = execute_matrix(matrix, executor, shards, budgets)
    if budgets:
        write_step_budgets(result.out, budgets)
    print_matrix(result.results["harnesses"], result.out, result.report)
    spec = matrix.spec
    _closing_notes(result, spec.benchmark, spec.quick or bool(spec.limit))


def _warn_no_sandbox() -> None:
    click.secho(
        "warning: --no-sandbox: harness programs run on this host unisolated (files, network, processes)",
        fg="yellow",
        err=True,
    )


def _closing_notes(result: RunResult, benchmark: str, subset: bool) -> None:
    """The subset hint, the embedded model's variability, and a partial run's error (exit 1)."""
    if subset:
        click.echo(
            f"\nThis was a subset. The full benchmark: forge-eval run {benchmark} --seeds 5 "
            "--epochs 3 --out runs/" + benchmark + "-full"
        )
    note = variability_note(result.results)
    if note:
        click.echo(f"\n{note}")
    if not result.complete:
        raise ForgeError(
            _partial_message(result.errors), "re-run the same command: it runs only what is missing"
        )


def variability_note(results: dict) -> str | None:
    """What a newcomer should know about an embedded model's numbers: they vary between runs."""
    if results["model"] not in EMBEDDED_MODELS or results.get("deterministic"):
        return None
    return (
        f"Note: numbers from the embedded model ({results['model']}) vary between runs of the same command: "
        "llama.cpp's prompt cache and batching shift its sampling slightly. --deterministic makes them "
        f"repeatable, at {DETERMINISTIC_COST}."
    )


def _partial_message(errors: tuple[str, ...]) -> str:
    if not errors:
        return "the run is partial: some seeds have no finished log"
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    failed = f"{len(errors)} sample{'s' if len(errors) > 1 else ''} failed"
    return f"the run is partial: {failed}; first: {errors[0]}{more}"


def print_matrix(matrix: dict, out: Path, report: Path | None) -> None:
    """Per harness its success with the 95% CI, calls and tokens per task; per pair the paired difference
    of success, overall and at each matched step budget."""
    console = Console()
    table = Table(title=f"harness matrix · baseline {matrix['baseline']}")
    for column in ("harness", "success", "95% CI", "calls/task", "tokens/task", "status"):
        table.add_column(column, justify="left" if column == "harness" else "right")
    for name in matrix["order"]:
        run = matrix["runs"][name]
        success = run["metrics"]["success_rate"]
        usage = run["usage"]["mean_per_task"]
        table.add_row(
            name,
            percent(success["estimate"]) + "%",
            f"[{percent(success['ci_low'])}, {percent(success['ci_high'])}]",
            _count(usage["calls"]),
            _count(usage["total_tokens"]),
            run["status"],
        )
    console.print(table)
    for pair in matrix["pairs"]:
        rows = [("success", pair["metrics"]["success_rate"])]
        rows += [(f"at {b['budget']} turns", b["difference"]) for b in pair["step_budgets"]]
        console.print(f"{escape(pair['direction'])} (paired, 95% CI):")
        for label, d in rows:
            console.print(f"  {label:<14} {_difference(d)}")
    console.print(f"report:  {report.resolve() if report else '-'}")
    console.print(f"results: {RunDir(out).results.resolve()}")
    console.print(f"runs:    {RunDir(out).harnesses.resolve()}/<harness>")


def _count(value: float | None) -> str:
    return "n/a" if value is None else f"{value:,.1f}"


def _difference(d: dict) -> str:
    if d["estimate"] is None:
        return "n/a (no paired cell)"
    text = f"{100 * d['estimate']:+.1f} pp"
    if d["ci_low"] is None:
        return text + f" (no interval: fewer than 2 paired tasks; {d['n_paired']} paired cells)"
    return text + f" [{100 * d['ci_low']:+.1f}, {100 * d['ci_high']:+.1f}] ({d['n_paired']} paired cells)"


def print_headline(results: dict, out: Path, report: Path | None) -> None:
    """Print the headline metrics with their 95% CIs, and where the report and logs are."""
    console = Console()
    table = Table(
        title=f"{results['benchmark']} · {results['model']} · {results['harness']} · "
        f"seeds {results['seeds']} · {results['n_tasks']} tasks"
    )
    for column in ("metric", "estimate", "95% CI", "per seed", "trials"):
        table.add_column(column, justify="left" if column == "metric" else "right")
    for name, m in results["metrics"].items():
        per_seed = " ".join(percent(p["estimate"], ".0f") for p in m["per_seed"])
        table.add_row(
            name,
            percent(m["estimate"]) + "%",
            f"[{percent(m['ci_low'])}, {percent(m['ci_high'])}]",
            per_seed,
            str(m["n_trials"]),
        )
    console.print(table)
    if results["status"] != "complete":
        console.print(
            "[yellow]partial run: some samples failed or are missing; re-run the same command "
            "to finish it[/yellow]"
        )
    console.print(f"estimator: {next(iter(results['metrics'].values()))['estimator']}")
    if report is not None:
        console.print(f"report:  {report.resolve()}")
    protocol = results.get("protocol") or {}
    if protocol.get("comparable"):
        console.print("protocol: every element is the official one (comparable with published scores)")
    elif protocol:
        reasons = protocol["reasons"]
        more = f" (and {len(reasons) - 1} more: see the report's Protocol section)" if reasons[1:] else ""
        console.print(f"[yellow]not comparable with published scores: {escape(reasons[0] + more)}[/yellow]")
    files = RunDir(out)
    console.print(f"results: {files.results.resolve()}")
    console.print(f"logs:    inspect view --log-dir {files.logs.resolve()}")
