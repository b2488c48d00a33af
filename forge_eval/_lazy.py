"""Click commands and groups that import their code on first use.

A command's interface (arguments, options, help) is declared in a module that imports only click; its
body, named "module:function", is imported when the command runs. `forge-eval --help`,
`forge-eval run --help` and usage errors then never load Inspect, pandas or the benchmarks (seconds of
imports), and a body's module imports what it needs at its top. This is click's "lazily loading
subcommands" pattern (`LazyGroup`), carried one step further to a command's callback (`LazyCommand`).
"""

import importlib
from collections.abc import Callable
from typing import Any

import click


def load(target: str) -> Any:
    """The object named by `target`, "module:attribute", importing its module."""
    module, _, attribute = target.partition(":")
    return getattr(importlib.import_module(module), attribute)


class LazyGroup(click.Group):
    """A group whose sub-commands, `lazy_commands` {name: "module:attribute"}, are imported when looked up."""

    def __init__(self, *args: Any, lazy_commands: dict[str, str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lazy_commands = lazy_commands

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.lazy_commands, *self.commands})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = self.lazy_commands.get(cmd_name)
        return load(target) if target is not None else super().get_command(ctx, cmd_name)


class LazyCommand(click.Command):
    """A command whose callback is `target`, imported when the command runs.

    The function it decorates declares the interface only: its docstring is the help, the options are
    the decorators above it, and `target` receives them as keyword arguments.
    """

    def __init__(self, *args: Any, target: str, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.target = target

    def invoke(self, ctx: click.Context) -> Any:
        return ctx.invoke(load(self.target), **ctx.params)


def lazy_command(
    target: str, name: str | None = None, **attrs: Any
) -> Callable[[Callable[..., Any]], LazyCommand]:
    """`click.command` for a `LazyCommand` running `target`."""
    return click.command(name, cls=LazyCommand, target=target, **attrs)
