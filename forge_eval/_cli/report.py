"""`forge-eval report DIR`: rebuild the HTML report of a run."""

from pathlib import Path

import click

from forge_eval._cli._options import step_budget_option
from forge_eval._lazy import lazy_command


@lazy_command("forge_eval._cli._report:report")
@click.argument("run_dir", metavar="DIR", type=click.Path(path_type=Path))
@step_budget_option(
    "Add every metric as if each trajectory were cut at N model turns (writes DIR/budgets.json)."
)
def report() -> None:
    """Rebuild DIR/report.html from the run directory DIR and print its path."""
