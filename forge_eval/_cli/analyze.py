"""`forge-eval analyze DIR [--compare DIR2]`: behavior metrics of a run, with CIs, into behavior.json."""

from pathlib import Path

import click

from forge_eval._cli._options import bootstrap_seed_option, resamples_option
from forge_eval._lazy import lazy_command


@lazy_command("forge_eval._cli._analyze:analyze")
@click.argument("run_dir", metavar="DIR", type=click.Path(path_type=Path))
@click.option(
    "--compare",
    "compare",
    metavar="DIR2",
    type=click.Path(path_type=Path),
    help="Another run of the same tasks and seeds: add paired differences DIR - DIR2 with CIs.",
)
@resamples_option
@bootstrap_seed_option
def analyze() -> None:
    """Measure tool usage and the five capabilities of the run in DIR.

    Writes DIR/behavior.json (every metric with a two-level bootstrap CI over tasks x seeds, per harness
    and overall) and adds a Behavior section to DIR/report.html. The proxy's call records in
    DIR/records, when the run has them, add the model server's tool-call parse verdicts.
    """
