"""`forge-eval run BENCH`: a benchmark over several seeds, with CIs and a report."""

import json
import shlex
import sys
from pathlib import Path

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from forge_eval._cli._options import parse_key_values
from forge_eval._errors import ForgeError

# Measured with bench/quickstart_time.py --deterministic (README, Quick start).
DETERMINISTIC_COST = "about 2.5x the time (the quick-start run: 33 min against 13 min, one thread, 2 cores)"


@click.command()
@click.argument("benchmark")
@click.option("--seeds", type=click.IntRange(min=1), default=3, show_default=True, help="Number of seeds.")
@click.option("--seed-base", type=int, default=0, show_default=True, help="First seed.")
@click.option(
    "--epochs",
    type=click.IntRange(min=1),
    default=None,
    help="Trials per task per seed (enables pass@k and pass^k for k <= epochs). "
    "Default: the benchmark's official trial count.",
)
@click.option(
    "--model",
    default=None,
    help="Embedded model name (see `forge-eval list`) or an Inspect model string "
    "(e.g. openai-api/vllm/Qwen2.5-7B-Instruct). Default: the embedded model, started here.",
)
@click.option("--model-base-url", default=None, help="Base URL of an OpenAI-compatible endpoint.")
@click.option("-M", "model_args", multiple=True, metavar="KEY=VALUE", help="Inspect model argument.")
@click.option("--harness", default=None, help="Harness name (default: the benchmark's own).")
@click.option("--limit", type=click.IntRange(min=1), default=None, help="Run only the first N tasks.")
@click.option("--quick", is_flag=True, help="Run only the benchmark's quick subset of tasks.")
@click.option("--temperature", type=float, default=None, help="Sampling temperature (default: the model's).")
@click.option(
    "--max-tokens",
    type=click.IntRange(min=1),
    default=None,
    help="Most tokens per model reply. Default: the benchmark's setting; for an embedded model, "
    "its reply cap (256 tokens).",
)
@click.option(
    "--max-connections", type=click.IntRange(min=1), default=None, help="Concurrent model connections."
)
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Run directory (default: runs/<benchmark>).",
)
@click.option(
    "--judge",
    default=None,
    help="Judge model of a benchmark scored by an LLM judge (Inspect model role 'judge'): an Inspect "
    "model string or an embedded model name. Default: the benchmark's official judge.",
)
@click.option(
    "--model-role",
    "model_roles",
    multiple=True,
    metavar="ROLE=MODEL",
    help="Bind an Inspect model role the benchmark's code calls to a model (an Inspect model string or an "
    "embedded model name), as `inspect eval --model-role` does, e.g. --model-role user=openai/gpt-4o "
    "(Claw-Eval's simulated user); --model-role judge=MODEL is --judge MODEL.",
)
@click.option(
    "--data-dir",
    type=click.Path(path_type=Path),
    default=None,
    help="Local copy of the benchmark's official task data (default: its upstream source).",
)
@click.option(
    "--deterministic",
    is_flag=True,
    help="Serve the embedded model in its exactly repeatable mode (no prompt cache, one request at a time).",
)
@click.option(
    "--no-sandbox",
    is_flag=True,
    help="Run harness programs (codex, claude-code, openclaw) directly on this host, without the local "
    "sandbox: unisolated, for debugging only.",
)
@click.option(
    "--step-budget",
    "step_budget",
    default=None,
    metavar="N[,M...]",
    help="Also report every metric as if each trajectory were cut at N model turns (budgets.json, report).",
)
@click.option("-T", "task_args", multiple=True, metavar="KEY=VALUE", help="Task argument of the benchmark.")
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
    step_budget: str | None,
    task_args: tuple[str, ...],
) -> None:
    """Run BENCHMARK over several seeds; resumable: re-run the same command to finish an interrupted run."""
    # deferred: Inspect, pandas and every benchmark load only when the command runs (fast --help)
    from forge_eval.analysis import parse_budgets
    from forge_eval.runner import RunSpec, execute, plan_run

    budgets = parse_budgets(step_budget) if step_budget else ()

    spec = RunSpec(
        benchmark=benchmark,
        seeds=tuple(range(seed_base, seed_base + seeds)),
        epochs=epochs,
        model=model,
        harness=harness,
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
        out=out or Path("runs") / benchmark,
        command=shlex.join(["forge-eval", *sys.argv[1:]]),
    )
    plan = plan_run(spec)
    if no_sandbox:
        click.secho(
            "warning: --no-sandbox: harness programs run on this host unisolated (files, network, processes)",
            fg="yellow",
            err=True,
        )
    for note in plan.notes:
        click.echo(note)
    result = execute(plan)
    if budgets:
        write_step_budgets(result.out, budgets)
    print_headline(result.results, result.out, result.report)
    if quick or limit:
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
    from forge_eval.models import EMBEDDED_MODELS  # deferred like the runner: only once a run finished

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


def write_step_budgets(run_dir: Path, budgets: tuple[int, ...]) -> None:
    """Write run_dir/budgets.json, rebuild the report with its section, and print success per budget."""
    # deferred: pandas, scipy and matplotlib load only when the command runs (fast --help)
    from forge_eval.analysis import write_budgets
    from forge_eval.reports import build_report

    data = json.loads(write_budgets(run_dir, budgets).read_text())
    for point in data["budgets"]:
        m = point["metrics"]["success_rate"]
        click.echo(
            f"success at {point['budget']:>4} model turns: {_percent(m['estimate'])}% "
            f"[{_percent(m['ci_low'])}, {_percent(m['ci_high'])}]"
        )
    build_report(run_dir)


def _percent(value: float | None, spec: str = ".1f") -> str:
    """A fraction as a percentage; null (not estimable, e.g. a CI over one task) as n/a."""
    return "n/a" if value is None else format(value * 100, spec)


def print_headline(results: dict, out: Path, report: Path | None) -> None:
    """Print the headline metrics with their 95% CIs, and where the report and logs are."""
    from forge_eval.rundir import RunDir  # imported here like the runner: pandas only once a run finished

    console = Console()
    table = Table(
        title=f"{results['benchmark']} · {results['model']} · {results['harness']} · "
        f"seeds {results['seeds']} · {results['n_tasks']} tasks"
    )
    for column in ("metric", "estimate", "95% CI", "per seed", "trials"):
        table.add_column(column, justify="left" if column == "metric" else "right")
    for name, m in results["metrics"].items():
        per_seed = " ".join(_percent(p["estimate"], ".0f") for p in m["per_seed"])
        table.add_row(
            name,
            _percent(m["estimate"]) + "%",
            f"[{_percent(m['ci_low'])}, {_percent(m['ci_high'])}]",
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


def parse_model_roles(pairs: tuple[str, ...]) -> dict[str, str]:
    """`--model-role ROLE=MODEL` pairs: one model name per role (Inspect's inline YAML model configs and
    model lists are not taken: a run records each role's model by name)."""
    roles = parse_key_values(pairs, "--model-role")
    for role, model in roles.items():
        if not isinstance(model, str) or not model or "," in model:
            raise click.BadParameter(
                f"{role}={model!r}: expected one model name (an Inspect model string or an embedded model)",
                param_hint="--model-role",
            )
    return roles
