"""Per-harness tool rules: how each harness's tools read and write, and how its shell reports failure.

One `HarnessRules` table per harness, built from the harness's facts (its module in
`forge_eval.harnesses` is their one home) and listed in `HARNESS_RULES`. A tool call is classified by
the table of the harness that made it; tools no table names (a benchmark's own tools, such as
forgelab's `<service>_<verb>`) go through `_services.py`.
"""

import functools
import re
import shlex
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from forge_eval._registry import Registry
from forge_eval.analysis.behavior._access import Access, Op
from forge_eval.analysis.behavior._patch import patch_accesses
from forge_eval.analysis.behavior._shell import SHELL_COMMANDS, CommandRule, classify_shell
from forge_eval.harnesses import EXIT_CODE, HARNESSES, HarnessFacts, ToolUse, facts_for


@dataclass(frozen=True)
class CallAccess:
    """What one tool call does: its operations (also on unnamed resources) and named accesses in order;
    `verifies`: it checks the work (runs the tests, `git diff`), see `_shell.VERIFYING`."""

    ops: frozenset[Op]
    accesses: tuple[Access, ...]
    verifies: bool = False


Classifier = Callable[[Mapping[str, Any], "HarnessRules"], CallAccess]


@dataclass(frozen=True)
class ToolRule:
    """How calls of one tool touch resources.

    Attributes:
        classify: Arguments (and the harness's rules) -> the call's accesses.
        generic_shell: The tool runs arbitrary shell commands (highlighted in tool-usage shares).
        command: Arguments -> the command line, for a shell tool (its exit status is read with it).
    """

    classify: Classifier
    generic_shell: bool = False
    command: Callable[[Mapping[str, Any]], str] | None = None


@dataclass(frozen=True)
class HarnessRules:
    """The rules of one harness.

    Attributes:
        name: The harness name (as in `HARNESSES`).
        tools: Tool name -> rule.
        shell_commands: Command name -> rule, for the harness's shell tool.
        exit_code: Finds the exit status in a shell tool's result text where the harness writes it
            (group 1 = the code).
        tool_error: Matches a non-shell tool's result that is the harness's report of its failure (None:
            the harness's failures are structured, in the transcript's error field).
        timeout: Finds a timeout in a tool's result text.
        aliases: Other names the harness goes by in logs (`codex_cli`, `claude-code`).
    """

    name: str
    tools: dict[str, ToolRule]
    shell_commands: dict[str, CommandRule] = field(default_factory=lambda: dict(SHELL_COMMANDS))
    exit_code: re.Pattern[str] = re.compile(EXIT_CODE)
    tool_error: re.Pattern[str] | None = None
    timeout: re.Pattern[str] = re.compile(r"^(?:command )?timed out|\btimed out after\b", re.I | re.M)
    aliases: tuple[str, ...] = ()


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value] if value else []
    if isinstance(value, list | tuple):
        return [v for v in value if isinstance(v, str) and v]
    return []


def shell_tool(command_arg: str, cwd_arg: str | None = None) -> ToolRule:
    """A generic shell tool whose `command_arg` holds a command line (a string or an argv list)."""

    def command(args: Mapping[str, Any]) -> str:
        value = args.get(command_arg, "")
        if isinstance(value, list):  # an argv (Codex's `shell`): quote it back into one command line
            return shlex.join(str(c) for c in value)
        return str(value)

    def classify(args: Mapping[str, Any], rules: HarnessRules) -> CallAccess:
        cwd = args.get(cwd_arg) if cwd_arg else None
        found = classify_shell(command(args), rules.shell_commands, cwd if isinstance(cwd, str) else None)
        return CallAccess(found.ops, found.accesses, found.verifies)

    return ToolRule(classify, generic_shell=True, command=command)


def file_tool(op: Op, *path_args: str) -> ToolRule:
    """A tool that reads or writes the files named in `path_args` (a string or a list each)."""

    def classify(args: Mapping[str, Any], rules: HarnessRules) -> CallAccess:
        paths = [p for name in path_args for p in _strings(args.get(name))]
        return CallAccess(frozenset({op}), tuple(Access(op, p) for p in paths))

    return ToolRule(classify)


def patch_tool(arg: str) -> ToolRule:
    """A tool that applies a patch (Codex/OpenClaw `apply_patch`): writes the files the patch names."""

    def classify(args: Mapping[str, Any], rules: HarnessRules) -> CallAccess:
        return CallAccess(frozenset({"write"}), tuple(patch_accesses(str(args.get(arg, "")))))

    return ToolRule(classify)


def editor_tool(command_arg: str, path_arg: str, reads: frozenset[str]) -> ToolRule:
    """A multi-command editor (Inspect's `text_editor`): `reads` commands read, the others write."""

    def classify(args: Mapping[str, Any], rules: HarnessRules) -> CallAccess:
        op: Op = "read" if args.get(command_arg) in reads else "write"
        paths = _strings(args.get(path_arg))
        return CallAccess(frozenset({op}), tuple(Access(op, p) for p in paths))

    return ToolRule(classify)


def _no_access(args: Mapping[str, Any], rules: HarnessRules) -> CallAccess:
    return CallAccess(frozenset(), ())


OTHER = ToolRule(_no_access)

def _tool_rule(use: ToolUse) -> ToolRule:
    if use.kind == "shell":
        return shell_tool(use.args[0], cwd_arg=use.cwd_arg)
    if use.kind in ("read", "write"):
        return file_tool(use.kind, *use.args)
    if use.kind == "patch":
        return patch_tool(use.args[0])
    if use.kind == "editor":
        return editor_tool(use.args[0], use.args[1], frozenset(use.reads))
    return OTHER


def rules_from(facts: HarnessFacts) -> HarnessRules:
    """A harness's behavior rules from its facts (`forge_eval.harnesses`)."""
    return HarnessRules(
        name=facts.name,
        tools={tool: _tool_rule(use) for tool, use in facts.tools.items()},
        exit_code=re.compile(facts.exit_code),
        tool_error=re.compile(facts.tool_error) if facts.tool_error else None,
        aliases=facts.aliases,
    )


def _register_all() -> None:
    for name, _ in HARNESSES.items():
        HARNESS_RULES.register(name, rules_from(facts_for(name)))


#: The rules of every registered harness, by harness name (built from the harnesses' facts).
HARNESS_RULES: Registry[HarnessRules] = Registry("behavior rules harness", _register_all)


@functools.cache
def rules_for(harness: str | None) -> HarnessRules:
    """The rules of `harness` (by name or alias): `forge_eval.harnesses.facts_for` decides, and a harness
    forge-eval does not know gets every known tool table merged, so it stays analyzable."""
    return rules_from(facts_for(harness))
