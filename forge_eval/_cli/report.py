"""`forge-eval report DIR`: rebuild the HTML report of a run."""

from pathlib import Path

import click

from forge_eval._errors import UsageError


@click.command()
@click.argument("run_dir", metavar="DIR", type=click.Path(path_type=Path))
@click.option(
    "--step-budget",
    "step_budget",
    default=None,
    metavar="N[,M...]",
    help="Add every metric as if each trajectory were cut at N model turns (writes DIR/budgets.json).",
)
def report(run_dir: Path, step_budget: str | None) -> None:
    """Rebuild DIR/report.html from the run directory DIR and print its path."""
    if not run_dir.is_dir():
        what = "is not a directory" if run_dir.exists() else "does not exist"
        raise UsageError(
            f"run directory {run_dir} {what}",
            "pass the directory a `forge-eval run ... --out DIR` wrote (it holds results.json)",
        )
    # Imported here: matplotlib and pandas are only needed once a report is actually built.
    from forge_eval.reports import build_report

    if step_budget:
        # deferred like build_report: the runner and analysis load Inspect and pandas
        from forge_eval._cli.run import write_step_budgets
        from forge_eval.analysis import parse_budgets

        write_step_budgets(run_dir, parse_budgets(step_budget))
    click.echo(str(build_report(run_dir).resolve()))
