"""`forge-eval` entry point: a click group whose sub-commands are imported on first use.

Each command's module declares its interface and imports only click; what it does is imported when it
runs (`forge_eval._lazy`). That keeps `forge-eval --help`, `forge-eval COMMAND --help` and usage errors
fast (importing Inspect alone takes ~2 s).
"""

import sys

import click

from forge_eval._errors import ForgeError
from forge_eval._lazy import LazyGroup

# command name -> "module:attribute" of its click command
COMMANDS: dict[str, str] = {
    "run": "forge_eval._cli.run:run",
    "analyze": "forge_eval._cli.analyze:analyze",
    "compare": "forge_eval._cli.compare:compare",
    "list": "forge_eval._cli.listing:list_command",
    "report": "forge_eval._cli.report:report",
    "proxy": "forge_eval._cli.proxy:proxy",
    "serve-model": "forge_eval.models:serve_model",
    "ablate": "forge_eval._cli.ablate:ablate",
}


# every command's help shows its defaults
@click.group(
    cls=LazyGroup,
    lazy_commands=COMMANDS,
    context_settings={"help_option_names": ["-h", "--help"], "show_default": True},
)
@click.version_option(package_name="forge-eval")
def cli() -> None:
    """Evaluate, analyze and train harness-native agents."""


def main() -> None:
    """Run the CLI, turning `ForgeError`s into messages and exit codes instead of tracebacks."""
    try:
        cli.main(standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("interrupted; finished work is kept (re-run the same command to resume)", err=True)
        sys.exit(130)
    except click.ClickException as e:
        e.show()
        sys.exit(e.exit_code)
    except ForgeError as e:
        click.secho(f"error: {e.message}", fg="red", err=True)
        if e.hint:
            click.echo(f"  hint: {e.hint}", err=True)
        sys.exit(e.exit_code)
    except KeyboardInterrupt:
        click.echo("interrupted; finished work is kept (re-run the same command to resume)", err=True)
        sys.exit(130)


if __name__ == "__main__":
    main()
