"""`forge-eval report DIR`: rebuild the HTML report of a run."""

from pathlib import Path

import click

from forge_eval._errors import UsageError


@click.command()
@click.argument("run_dir", metavar="DIR", type=click.Path(path_type=Path))
def report(run_dir: Path) -> None:
    """Rebuild DIR/report.html from the run directory DIR and print its path."""
    if not run_dir.is_dir():
        what = "is not a directory" if run_dir.exists() else "does not exist"
        raise UsageError(
            f"run directory {run_dir} {what}",
            "pass the directory a `forge-eval run ... --out DIR` wrote (it holds results.json)",
        )
    # Imported here: matplotlib and pandas are only needed once a report is actually built.
    from forge_eval.reports import build_report

    click.echo(str(build_report(run_dir).resolve()))
