"""What `forge-eval proxy stats` does: the token-fidelity table of a proxy's records."""

from pathlib import Path

import click

from forge_eval._errors import UsageError
from forge_eval.training.fidelity import by_harness, fidelity_table, records_fidelity


def stats(records_dir: Path, per_rollout: bool) -> None:
    """`forge-eval proxy stats` (its options and help: forge_eval/_cli/proxy.py)."""
    if not records_dir.is_dir():
        raise UsageError(
            f"no records directory at {records_dir}", "give the --records directory of the proxy"
        )
    found = records_fidelity(records_dir)
    if not found:
        raise UsageError(
            f"{records_dir} holds no rollout records",
            "give the --records directory of a proxy that served rollouts (it holds <rollout>/<attempt>/)",
        )
    if per_rollout:
        click.echo(fidelity_table(((f"{r}/{a}", f) for r, a, f in found), first="rollout"))
        click.echo()
    click.echo(fidelity_table(by_harness(f for _, _, f in found).items()))
    unverified = sum(f.unverified_rollouts for _, _, f in found)
    if unverified:
        click.echo(
            f"warning: {unverified} rollout(s) have calls without the engine's token ids; training masks "
            "them (never re-tokenizes): ask the upstream for return_token_ids and make sure no router "
            "in front of it drops prompt_token_ids",
            err=True,
        )
