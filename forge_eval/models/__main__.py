"""`python -m forge_eval.models serve ...`: the process `EmbeddedModelServer` starts."""

import sys

import click

from forge_eval._errors import ForgeError
from forge_eval.models._command import serve_model


@click.group()
def main() -> None:
    """Embedded model tools."""


main.add_command(serve_model, "serve")

if __name__ == "__main__":
    try:
        main.main(standalone_mode=False)
    except click.ClickException as e:
        e.show()
        sys.exit(e.exit_code)
    except ForgeError as e:
        print(f"error: {e}", file=sys.stderr)
        sys.exit(e.exit_code)
