"""`forge-eval` entry point: a click group whose sub-commands are imported on first use.

Lazy loading keeps `forge-eval --help` and usage errors fast (importing Inspect takes ~2 s).
"""

import importlib
import sys

import click

from forge_eval._errors import ForgeError

# command name -> "module:attribute" of a click command
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


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = COMMANDS.get(cmd_name)
        if target is None:
            return None
        module, attr = target.split(":")
        return getattr(importlib.import_module(module), attr)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
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
