"""What `forge-eval compare` does: paired differences of runs on shared tasks and seeds, with CIs."""

from pathlib import Path

import click

from forge_eval._errors import UsageError
from forge_eval.analysis import compare_runs, parse_budgets
from forge_eval.reports import build_compare_report
from forge_eval.rundir import RunDir, json_safe, write_json


def _line(name: str, d: dict) -> str:
    if d["estimate"] is None:
        return f"  {name:<14} n/a (no paired cell)"
    text = f"  {name:<14} {100 * d['baseline']:5.1f}% -> {100 * d['run']:5.1f}%"
    text += f"  diff {100 * d['estimate']:+6.1f} pp"
    if d["ci_low"] is not None:
        text += f"  [{100 * d['ci_low']:+.1f}, {100 * d['ci_high']:+.1f}]"
    else:
        text += "  (no interval: fewer than 2 paired tasks)"
    text += f"  ({d['n_paired']} paired cells)"
    if d.get("under_noise_floor"):
        text += f"  under the noise floor ({100 * d['noise_floor']:.1f} pp)"
    return text


def compare(
    runs: tuple[Path, ...],
    out: Path | None,
    step_budget: str | None,
    behavior: bool,
    resamples: int,
    bootstrap_seed: int,
) -> None:
    """`forge-eval compare` (its options and help: forge_eval/_cli/compare.py)."""
    if len(runs) < 2:
        raise UsageError("compare needs at least two run directories", hint="forge-eval compare RUN_A RUN_B")
    budgets = parse_budgets(step_budget) if step_budget else ()
    data = json_safe(
        compare_runs(
            list(runs), budgets=budgets, behavior=behavior, n_resamples=resamples, random_state=bootstrap_seed
        )
    )
    out = out or Path("runs") / f"compare-{runs[0].name}-vs-{runs[1].name}"
    out.mkdir(parents=True, exist_ok=True)
    written = write_json(RunDir(out).compare, data)
    for pair in data["comparisons"]:
        click.echo(f"{pair['run']} minus {pair['baseline']} (95% CI):")
        for difference in pair["protocol_differences"]:
            click.secho(f"  warning: protocols differ: {difference}", fg="red")
        for note in pair["matching"]["notes"]:
            click.secho(f"  note: {note}", fg="yellow")
        for name, d in pair["metrics"].items():
            click.echo(_line(name, d))
        for b in pair["step_budgets"]:
            click.echo(_line(f"budget {b['budget']}", b["difference"]))
    click.echo(f"report:  {build_compare_report(data, out).resolve()}")
    click.echo(f"data:    {written.resolve()}")
