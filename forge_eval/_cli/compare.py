"""`forge-eval compare RUN_A RUN_B [...]`: paired differences of runs on shared tasks and seeds, with CIs."""

from pathlib import Path

import click

from forge_eval._cli._options import bootstrap_seed_option, resamples_option, step_budget_option
from forge_eval._lazy import lazy_command


@lazy_command("forge_eval._cli._compare:compare")
@click.argument("runs", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Where compare.json and compare.html go (default: runs/compare-<baseline>-vs-<run>).",
)
@step_budget_option(
    "Also compare success as if every trajectory were cut at N model turns (a matched budget)."
)
@click.option(
    "--behavior/--no-behavior", default=True, help="Compare behavior metrics too."
)
@resamples_option
@bootstrap_seed_option
def compare() -> None:
    """Compare RUNS (directories of `forge-eval run`): each run after the first minus the first.

    Every headline metric is differenced per (task, seed) cell and bootstrapped over tasks, with a clear
    statement when tasks, seeds or epochs do not match. Writes compare.json and a self-contained
    compare.html.
    """
