"""`forge-eval list`: the benchmarks, harnesses, models and credit variants forge-eval knows."""

from forge_eval._lazy import lazy_command


@lazy_command("forge_eval._cli._listing:list_command", "list")
def list_command() -> None:
    """List benchmarks, harnesses, embedded models and credit variants."""
