"""Shared option parsing for the CLI."""

from typing import Any

import click
import yaml


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
