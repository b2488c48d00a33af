"""What `forge-eval report` does, and the step-budget section that `run` and `report` write."""

import json
from pathlib import Path

import click

from forge_eval._errors import UsageError
from forge_eval.analysis import parse_budgets, write_budgets
from forge_eval.reports import build_report


def report(run_dir: Path, step_budget: str | None) -> None:
    """`forge-eval report` (its options and help: forge_eval/_cli/report.py)."""
    if not run_dir.is_dir():
        what = "is not a directory" if run_dir.exists() else "does not exist"
        raise UsageError(
            f"run directory {run_dir} {what}",
            "pass the directory a `forge-eval run ... --out DIR` wrote (it holds results.json)",
        )
    if step_budget:
        write_step_budgets(run_dir, parse_budgets(step_budget))
    click.echo(str(build_report(run_dir).resolve()))


def write_step_budgets(run_dir: Path, budgets: tuple[int, ...]) -> None:
    """Write run_dir/budgets.json, rebuild the report with its section, and print success per budget."""
    data = json.loads(write_budgets(run_dir, budgets).read_text())
    for point in data["budgets"]:
        m = point["metrics"]["success_rate"]
        click.echo(
            f"success at {point['budget']:>4} model turns: {percent(m['estimate'])}% "
            f"[{percent(m['ci_low'])}, {percent(m['ci_high'])}]"
        )
    build_report(run_dir)


def percent(value: float | None, spec: str = ".1f") -> str:
    """A fraction as a percentage; null (not estimable, e.g. a CI over one task) as n/a."""
    return "n/a" if value is None else format(value * 100, spec)
