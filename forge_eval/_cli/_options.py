"""Options several commands share, and their parsing."""

from typing import Any

import click
import yaml

# forge_eval.analysis's N_RESAMPLES and RANDOM_STATE, written out: the commands' interfaces load no pandas
# or scipy (forge_eval._lazy); tests/analysis/test_stats_bootstrap.py checks that they agree.
resamples_option = click.option(
    "--resamples", default=10_000, help="Bootstrap resamples per interval."
)
bootstrap_seed_option = click.option(
    "--bootstrap-seed", default=0, help="Seed of the bootstrap."
)


def step_budget_option(help: str) -> Any:
    """`--step-budget N[,M...]`: metrics as if each trajectory were cut at N model turns."""
    return click.option("--step-budget", "step_budget", default=None, metavar="N[,M...]", help=help)


def parse_key_values(pairs: tuple[str, ...], option: str) -> dict[str, Any]:
    """Parse `k=v` pairs as Inspect's CLI does: values are YAML scalars (1 -> int, true -> bool)."""
    parsed: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise click.BadParameter(f"expected KEY=VALUE, got '{pair}'", param_hint=option)
        try:
            parsed[key] = yaml.safe_load(value) if value else ""
        except yaml.YAMLError:
            parsed[key] = value
    return parsed


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
