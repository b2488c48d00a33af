"""What `forge-eval analyze` does: behavior metrics of a run, with CIs, into behavior.json."""

from pathlib import Path
from typing import Any

import click

from forge_eval._errors import UsageError
from forge_eval.analysis.behavior import analyze_run
from forge_eval.reports import build_report
from forge_eval.rundir import RunDir


def _check_run_dir(path: Path, option: str) -> None:
    if not path.is_dir():
        what = "is not a directory" if path.exists() else "does not exist"
        raise UsageError(
            f"{option} {path} {what}",
            "pass a directory written by `forge-eval run ... --out DIR` (it holds logs/ and results.json)",
        )


def _line(title: str, interval: dict[str, Any] | None, missing: str = "no eligible rollouts") -> str:
    if interval and interval.get("not_measurable"):
        return f"  {title:<28} {interval['not_measurable']}"
    if not interval or interval.get("estimate") is None:
        return f"  {title:<28} n/a ({missing})"
    text = f"  {title:<28} {interval['estimate']:6.1f}"
    if interval.get("ci_low") is not None:
        text += f"  [{interval['ci_low']:.1f}, {interval['ci_high']:.1f}]"
    return text


def analyze(run_dir: Path, compare: Path | None, resamples: int, bootstrap_seed: int) -> None:
    """`forge-eval analyze` (its options and help: forge_eval/_cli/analyze.py)."""
    _check_run_dir(run_dir, "run directory")
    if compare is not None:
        _check_run_dir(compare, "--compare directory")
    if resamples < 100:
        raise UsageError(f"--resamples must be at least 100, got {resamples}")
    data = analyze_run(run_dir, compare, n_resamples=resamples, random_state=bootstrap_seed)
    overall = data["groups"]["overall"]
    titles = {name: d["title"] for name, d in data["definitions"].items()}
    counts = f"{overall['n_rollouts']} rollouts, {overall['n_calls']} tool calls"
    click.echo(f"{counts} (estimate [95% CI], 0-100)")
    for name, interval in overall["capabilities"].items():
        click.echo(_line(titles[name], interval))
    for subset in ("all", "successful"):
        click.echo(_line(f"generic shell ({subset})", overall["tool_shares"][subset].get("generic_shell")))
    if "comparison" in data:
        click.echo(f"paired differences vs {compare} (this run minus the compared run):")
        paired = data["comparison"]["groups"].get("overall", {}).get("capabilities", {})
        for name, interval in paired.items():
            click.echo(_line(titles[name], interval, "fewer than 2 tasks with paired values"))
    click.echo(str(RunDir(run_dir).behavior.resolve()))
    if RunDir(run_dir).results.is_file():
        click.echo(str(build_report(run_dir).resolve()))
