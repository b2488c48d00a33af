"""What `forge-eval list` does: the benchmarks, harnesses, models and credit variants forge-eval knows."""

import click

from forge_eval.benchmarks import BENCHMARKS
from forge_eval.harnesses import HARNESSES
from forge_eval.models import EMBEDDED_MODELS
from forge_eval.training.credit import CREDIT_VARIANTS


def _sections() -> list[tuple[str, list[tuple[str, str]]]]:
    return [
        ("benchmarks", [(name, b.description) for name, b in BENCHMARKS.items()]),
        ("harnesses", [(name, h.description) for name, h in HARNESSES.items()]),
        (
            "models (embedded; any Inspect model string works too)",
            [(name, m.description) for name, m in EMBEDDED_MODELS.items()],
        ),
        ("credit variants", [(name, v.description) for name, v in CREDIT_VARIANTS.items()]),
    ]


def list_command() -> None:
    """`forge-eval list` (its help: forge_eval/_cli/listing.py)."""
    for title, entries in _sections():
        click.secho(title, bold=True)
        width = max((len(name) for name, _ in entries), default=0)
        for name, description in entries:
            click.echo(f"  {name:<{width}}  {description}")
