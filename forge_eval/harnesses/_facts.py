"""What the project knows about a harness, as plain data: role-tagging cues and tool rules.

Each harness module (`_codex.py`, `_claude_code.py`, `_openclaw.py`, `_react.py`) declares one
`HarnessFacts`; training's role tagging (`forge_eval.training._tagging`) and behavioral analysis
(`forge_eval.analysis.behavior._rules`) build their rules from it through `facts_for()`, so adding a
harness means writing one module. Plain data (no callables) keeps this importable without Inspect and
lets the two readers interpret it their own way.
"""

from dataclasses import dataclass, field
from typing import Literal

ToolKind = Literal["shell", "read", "write", "patch", "editor", "other"]


@dataclass(frozen=True)
class ToolUse:
    """How one of the harness's own tools touches files.

    Attributes:
        kind: "shell" (runs a command line), "read"/"write" (the files named in `args`), "patch"
            (applies the patch in `args[0]`), "editor" (`args` = (command argument, path argument);
            `reads` are its reading commands), "other" (no visible file access).
        args: The arguments that hold the command, the paths or the patch.
        cwd_arg: A shell tool's working-directory argument.
        reads: An editor's commands that only read.
    """

    kind: ToolKind
    args: tuple[str, ...] = ()
    cwd_arg: str | None = None
    reads: tuple[str, ...] = ()


def shell(command_arg: str, cwd_arg: str | None = None) -> ToolUse:
    return ToolUse("shell", (command_arg,), cwd_arg)


def reads(*path_args: str) -> ToolUse:
    return ToolUse("read", path_args)


def writes(*path_args: str) -> ToolUse:
    return ToolUse("write", path_args)


OTHER = ToolUse("other")


@dataclass(frozen=True)
class TaggingCues:
    """How to tell a harness's helper calls (titles, compactions, subagents) from its main agent.

    The tagger applies its rules in a fixed order; these switch the optional ones on and feed them.

    Attributes:
        title_by_schema: A tool-less call asking for a structured `{title}` output is a title call.
        compaction_phrases: Phrases of the last user turn that ask for a conversation summary.
        compaction_paths: Routes that compact (Codex's `/compact`).
        subagent_marker: A system-prompt marker of the harness's subagents.
        subagent_by_thread: Another conversation key than the main agent's is a subagent.
        subagent_by_alias: Another model alias than the main agent's (with tools) is a subagent.
        aux_without_tools: A call offered no tools is a helper ("aux") call.
        planning_tools: Tools whose calls are planning (todo lists, plan mode, goals).
    """

    title_by_schema: bool = False
    compaction_phrases: tuple[str, ...] = ()
    compaction_paths: tuple[str, ...] = ()
    subagent_marker: str | None = None
    subagent_by_thread: bool = True
    subagent_by_alias: bool = False
    aux_without_tools: bool = True
    planning_tools: tuple[str, ...] = ()


#: The default form of a failed shell command: the `exit status: N` line forge-eval's own shell tool
#: (`_shell.py`) appends as the result's last line. Anchored there, so a log that mentions an exit status
#: elsewhere in the output is data, not the command's status.
EXIT_CODE = r"(?:\A|\n)exit status: (-?\d+)\s*\Z"


@dataclass(frozen=True)
class HarnessFacts:
    """One harness's facts for the readers of its traffic.

    Attributes:
        name: The registry name (`forge-eval run --harness NAME`).
        aliases: Other names the harness goes by in logs and records (`codex_cli`, `claude_code`).
        tagging: Role-tagging cues.
        tools: The harness's own tools -> how they touch files.
        exit_code: Regex (flags inline) whose group 1 is the exit status in a shell result, anchored to
            the place the harness writes it (a header, the first or last line), never anywhere in the output.
        tool_error: Regex (flags inline) that matches a non-shell tool's whole result when it is the
            harness's own report of the tool's failure, for harnesses whose wire API has no error field
            (OpenClaw's `{"status": "error", "tool": ...}` over chat completions, Codex's messages over
            Responses); None where failures are structured (Anthropic's `is_error`, Inspect's ToolEvent).
    """

    name: str
    aliases: tuple[str, ...] = ()
    tagging: TaggingCues = field(default_factory=TaggingCues)
    tools: dict[str, ToolUse] = field(default_factory=dict)
    exit_code: str = EXIT_CODE
    tool_error: str | None = None

    def answers_to(self, name: str | None) -> bool:
        return name is not None and (name == self.name or name in self.aliases)
