"""Classify shell commands into reads and writes of paths.

Agents in bridged harnesses do most of their work through one generic shell tool (`exec_command`,
`Bash`, `exec`), so "did it read back what it wrote?" has to be answered from command strings. No
library does this (shlex only tokenizes), so this module walks the tokens of each simple command:
redirections (`>`, `>>`, `<`), a table of common commands (`cat` reads its operands, `sed -i` reads and
writes, `cp` reads sources and writes the target, ...), wrappers (`sudo`, `timeout 5`, `bash -lc '...'`),
`cd` (relative paths are joined to it) and heredocs (whose bodies are stdin, or a patch for
`apply_patch`). Unknown commands (`python x.py`, `make`) are "other": their effects are not visible.

Two more facts come from the same walk: whether a command line checks the work (runs a test suite, or
`git diff`/`git status`: `VERIFYING`), and whether its exit status is an answer rather than a failure
(`grep -q` exits 1 for "no match", `diff` and `cmp` for "different", `test` for "false": `answer_exit`).
"""

import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field

from forge_eval.analysis.behavior._access import Access, Op, normalize_path
from forge_eval.analysis.behavior._patch import patch_accesses

_SEPARATORS = frozenset({";", "&&", "||", "|", "&", "|&", "(", ")", ";;"})
_WRITE_REDIRECTS = frozenset({">", ">>", ">|", "&>", "&>>"})
_READ_REDIRECTS = frozenset({"<"})
_CONSUMING = frozenset({"<<<", ">&", "<&", "<<", "<<-"})  # take an operand that is not a file access
_IGNORED_PATHS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/stdin", "-", "/dev/tty"})
_HEREDOC = re.compile(r"<<-?\s*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\1")
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


@dataclass
class _Simple:
    """One simple command: its words, and the heredoc bodies fed to it."""

    words: list[str] = field(default_factory=list)
    heredocs: list[str] = field(default_factory=list)
    stdin_fed: bool = False  # a pipe, heredoc or here-string feeds it: a bare `cat` reads no file


@dataclass(frozen=True)
class CommandRule:
    """How one command touches files: `accesses(operands, options, heredoc)` -> accesses.

    Attributes:
        op: What the command does to its operands when `accesses` is not given.
        value_options: Options that take a value (`head -n 5`): the value is not an operand.
        leading_operands: Operands before the paths (`grep PATTERN`, `chmod MODE`).
        accesses: A custom rule for commands that both read and write (`cp`, `sed -i`).
        answer_exits: Exit statuses that answer a question rather than report a failure (`grep`: 1 = no
            line matched).
    """

    op: Op | None
    value_options: frozenset[str] = frozenset()
    leading_operands: int = 0
    accesses: Callable[[list[str], set[str], str | None], list[Access]] | None = None
    answer_exits: frozenset[int] = frozenset()


def _cp(operands: list[str], options: set[str], heredoc: str | None) -> list[Access]:
    *sources, target = operands or [""]
    return [Access("read", s) for s in sources] + ([Access("write", target)] if sources else [])


def _mv(operands: list[str], options: set[str], heredoc: str | None) -> list[Access]:
    return [Access("write", p) for p in operands]


def _sed(operands: list[str], options: set[str], heredoc: str | None) -> list[Access]:
    in_place = any(o == "-i" or o.startswith(("-i", "--in-place")) for o in options)
    files = operands if "-e" in options or "-f" in options else operands[1:]
    ops: list[Op] = ["read", "write"] if in_place else ["read"]
    return [Access(op, p) for p in files for op in ops]


def _pattern_first(operands: list[str], options: set[str], heredoc: str | None) -> list[Access]:
    files = operands if options & {"-e", "-f", "--regexp", "--file"} else operands[1:]
    return [Access("read", p) for p in files]


def _apply_patch(operands: list[str], options: set[str], heredoc: str | None) -> list[Access]:
    return patch_accesses(heredoc or (operands[0] if operands else ""))


def _dd(operands: list[str], options: set[str], heredoc: str | None) -> list[Access]:
    found = []
    for word in operands:
        if word.startswith("if="):
            found.append(Access("read", word[3:]))
        elif word.startswith("of="):
            found.append(Access("write", word[3:]))
    return found


def _read(*value_options: str, leading: int = 0) -> CommandRule:
    return CommandRule("read", frozenset(value_options), leading)


def _write(*value_options: str, leading: int = 0) -> CommandRule:
    return CommandRule("write", frozenset(value_options), leading)


_GREP_VALUES = (
    "-e",
    "-f",
    "--regexp",
    "--file",
    "-m",
    "-A",
    "-B",
    "-C",
    "--max-count",
    "--include",
    "--exclude",
    "-g",
    "--glob",
    "-t",
    "--type",
)

_NO = frozenset({1})  # "no match", "the files differ", "false": the answer, not a failure

# The rules for common POSIX/GNU commands; harnesses extend it (see _rules.py).
SHELL_COMMANDS: dict[str, CommandRule] = {
    **{c: _read("-n", "-c") for c in ("cat", "head", "tail", "less", "more", "tac", "nl", "bat")},
    **{c: _read() for c in ("ls", "wc", "stat", "file", "md5sum", "sha1sum", "sha256sum")},
    **{c: _read() for c in ("tree", "du", "realpath", "readlink", "xxd", "od", "strings", "sort", "uniq")},
    **{
        c: CommandRule("read", frozenset(_GREP_VALUES), accesses=_pattern_first, answer_exits=_NO)
        for c in ("grep", "egrep", "fgrep", "rg", "ag")
    },
    **{c: CommandRule("read", answer_exits=_NO) for c in ("diff", "cmp")},
    **{c: CommandRule(None, answer_exits=_NO) for c in ("test", "[", "[[")},
    "awk": CommandRule("read", frozenset({"-F", "-v"}), accesses=_pattern_first),
    "jq": CommandRule("read", frozenset({"--arg", "--argjson"}), accesses=_pattern_first),
    "sed": CommandRule("read", frozenset({"-e", "-f"}), accesses=_sed),
    "find": _read("-name", "-iname", "-type", "-maxdepth", "-mindepth", "-path", "-newer", "-size"),
    "cut": _read("-d", "-f", "-c", "-b"),
    "touch": _write(),
    "mkdir": _write("-m"),
    "rm": _write(),
    "rmdir": _write(),
    "truncate": _write("-s"),
    "tee": _write(),
    "chmod": _write(leading=1),
    "chown": _write(leading=1),
    "cp": CommandRule("write", frozenset({"-t"}), accesses=_cp),
    "install": CommandRule("write", frozenset({"-m", "-o", "-g"}), accesses=_cp),
    "ln": CommandRule("write", accesses=_cp),
    "mv": CommandRule("write", accesses=_mv),
    "dd": CommandRule("write", accesses=_dd),
    "apply_patch": CommandRule("write", accesses=_apply_patch),
}

# Words that run the rest of the command line: skip them (and their own options/values).
_WRAPPERS: dict[str, int] = {
    "sudo": 0,
    "env": 0,
    "nice": 0,
    "time": 0,
    "nohup": 0,
    "command": 0,
    "timeout": 1,
}
_SHELLS = frozenset({"bash", "sh", "zsh", "dash"})
_GIT_READS = frozenset({"status", "diff", "log", "show", "blame", "grep", "ls-files", "cat-file"})
_GIT_WRITES = frozenset(
    {"add", "rm", "mv", "checkout", "restore", "apply", "commit", "reset", "stash", "merge"}
)


def _runs(*subcommands: str) -> Callable[[list[str]], bool]:
    """The command's first operand is one of `subcommands` (`make test`, `go test`)."""
    return lambda words: next((w for w in words[1:] if not w.startswith("-")), "") in subcommands


def _python_module(words: list[str]) -> bool:
    return "-m" in words[:-1] and words[words.index("-m") + 1] in ("pytest", "unittest", "doctest")


def _always(words: list[str]) -> bool:
    return True


def _git_checks(words: list[str]) -> bool:
    """`git diff` or `git status`, past git's own options (`git -C DIR diff`)."""
    rest = list(words[1:])
    while rest and rest[0].startswith("-"):
        rest = rest[2:] if rest[0] in ("-C", "-c") else rest[1:]
    return bool(rest) and rest[0] in ("diff", "status")


# Commands that check the work rather than change it: a test suite, or git's view of the changes.
VERIFYING: dict[str, Callable[[list[str]], bool]] = {
    **{c: _always for c in ("pytest", "py.test", "tox", "nox", "jest", "vitest", "mocha", "ctest")},
    **{c: _python_module for c in ("python", "python3")},
    "make": _runs("test", "check", "tests"),
    **{c: _runs("test", "t") for c in ("npm", "yarn", "pnpm", "bun")},
    **{c: _runs("test") for c in ("go", "cargo", "dotnet", "mvn", "gradle")},
    "git": _git_checks,
}


def _strip_heredocs(command: str) -> tuple[str, list[str]]:
    """The command without heredoc bodies (which are not shell syntax), and the bodies in order."""
    lines = command.split("\n")
    kept: list[str] = []
    bodies: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        kept.append(line)
        i += 1
        for match in _HEREDOC.finditer(line):
            body: list[str] = []
            while i < len(lines) and lines[i].strip() != match.group(2):
                body.append(lines[i])
                i += 1
            i += 1
            bodies.append("\n".join(body))
    return "\n".join(kept), bodies


def _strip_comment(line: str) -> str:
    """The line up to an unquoted `#` that starts a word (shlex would also cut `a#b`, bash does not)."""
    quote = ""
    for i, char in enumerate(line):
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i]
    return line


def _simple_commands(command: str) -> list[_Simple]:
    text, bodies = _strip_heredocs(command)
    text = re.sub(r"\\\n", " ", text)
    text = " ; ".join(_strip_comment(line) for line in text.split("\n"))
    lexer = shlex.shlex(text, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    lexer.commenters = ""
    try:
        tokens = list(lexer)
    except ValueError:  # unbalanced quotes: fall back to whitespace words
        tokens = text.split()
    commands = [_Simple()]
    for token in tokens:
        if token in _SEPARATORS:
            commands.append(_Simple(stdin_fed=token in ("|", "|&")))
            continue
        if token in ("<<", "<<-", "<<<"):
            commands[-1].stdin_fed = True
            if token != "<<<" and bodies:
                commands[-1].heredocs.append(bodies.pop(0))
        commands[-1].words.append(token)
    return [c for c in commands if c.words]


def _split_redirects(words: list[str]) -> tuple[list[str], list[Access]]:
    """Words without redirections, and the file accesses the redirections make."""
    plain: list[str] = []
    found: list[Access] = []
    i = 0
    while i < len(words):
        word = words[i]
        target = words[i + 1] if i + 1 < len(words) else None
        if word in _WRITE_REDIRECTS or word in _READ_REDIRECTS or word in _CONSUMING:
            if plain and plain[-1].isdigit():  # `2>` arrives as "2", ">"
                plain.pop()
            if target is not None and target not in _IGNORED_PATHS and word not in _CONSUMING:
                found.append(Access("write" if word in _WRITE_REDIRECTS else "read", target))
            i += 2
            continue
        plain.append(word)
        i += 1
    return plain, found


def _unwrap(words: list[str]) -> list[str]:
    while words:
        head = words[0]
        if _ASSIGNMENT.match(head):
            words = words[1:]
        elif head in _WRAPPERS:
            rest = words[1:]
            while rest and (rest[0].startswith("-") or _ASSIGNMENT.match(rest[0])):
                rest = rest[1:]
            words = rest[_WRAPPERS[head] :]
        else:
            return words
    return words


def _operands(words: list[str], rule: CommandRule) -> tuple[list[str], set[str]]:
    operands: list[str] = []
    options: set[str] = set()
    i = 0
    while i < len(words):
        word = words[i]
        if word == "--":
            operands.extend(words[i + 1 :])
            break
        if word.startswith("-") and len(word) > 1:
            name = word.split("=", 1)[0]
            options.add(name)
            if name in rule.value_options and "=" not in word:
                i += 1
        else:
            operands.append(word)
        i += 1
    return operands, options


def _git(words: list[str]) -> tuple[Op | None, list[Access]]:
    sub = next((w for w in words[1:] if not w.startswith("-")), "")
    paths = [w for w in words[words.index(sub) + 1 :] if not w.startswith("-")] if sub else []
    if sub in _GIT_READS:
        return "read", [Access("read", p) for p in paths if sub not in ("log", "show", "grep")]
    if sub in _GIT_WRITES:
        return "write", [
            Access("write", p) for p in paths if sub in ("add", "rm", "mv", "checkout", "restore")
        ]
    return None, []


@dataclass(frozen=True)
class ShellAccess:
    """What a shell command line does to files.

    Attributes:
        ops: The operations the command performs, including ones on unnamed files (`ls`, `grep x`).
        accesses: The named paths it touches, in order, normalized and joined to `cd` targets.
    """

    ops: frozenset[Op]
    accesses: tuple[Access, ...]
    verifies: bool = False


def _inner_script(words: list[str]) -> str | None:
    """The script of `bash -c SCRIPT` (`-lc`, `-ec`, ...), None for any other command."""
    flags = [w for w in words[1:] if w.startswith("-") and not w.startswith("--")]
    if words[0] in _SHELLS and any("c" in w for w in flags):
        return next((w for w in words[1:] if not w.startswith("-")), "")
    return None


def answer_exit(command: str, code: int, rules: dict[str, CommandRule] = SHELL_COMMANDS) -> bool:
    """Whether exit status `code` is the answer of the command line's last command (whose status the line
    returns): `grep -q x f` exiting 1 found nothing, which is not a failed command."""
    simple = _simple_commands(command)
    words = _unwrap(_split_redirects(simple[-1].words)[0]) if simple else []
    if not words:
        return False
    script = _inner_script(words)
    if script is not None:
        return answer_exit(script, code, rules)
    if words[0] == "git":  # `git diff --quiet` / `--exit-code`: 1 = there are differences
        return code == 1 and _runs("diff")(words) and bool({"--quiet", "--exit-code"} & set(words))
    rule = rules.get(words[0].rsplit("/", 1)[-1])
    return rule is not None and code in rule.answer_exits


def classify_shell(
    command: str, rules: dict[str, CommandRule] = SHELL_COMMANDS, cwd: str | None = None
) -> ShellAccess:
    """Classify a shell command line: which paths it reads and writes, in order.

    Args:
        command: The command line (may hold `&&`, pipes, redirections, heredocs, `bash -lc '...'`).
        rules: Command name -> rule; a harness passes its own table.
        cwd: The working directory when known (Codex's `workdir`); `cd` in the command updates it.

    Returns:
        The operations and the accesses; a command no rule knows contributes nothing.
    """
    ops: set[Op] = set()
    found: list[Access] = []
    verifies = False
    for simple in _simple_commands(command):
        words, redirects = _split_redirects(simple.words)
        words = _unwrap(words)
        script = _inner_script(words) if words else None
        if not words:
            accesses: list[Access] = []
        elif script is not None:
            inner = classify_shell(script, rules, cwd)  # an inner `cd` does not leak out
            ops |= inner.ops
            verifies |= inner.verifies
            accesses = list(inner.accesses)
        elif words[0] == "cd":
            target = words[1] if len(words) > 1 else "~"
            cwd = normalize_path(target, cwd)
            accesses = []
        elif words[0] == "git":
            op, accesses = _git(words)
            if op:
                ops.add(op)
        else:
            rule = rules.get(words[0].rsplit("/", 1)[-1])
            accesses = []
            if rule is not None:
                operands, options = _operands(words[1:], rule)
                operands = operands[rule.leading_operands :]
                if rule.accesses is not None:
                    heredoc = simple.heredocs[0] if simple.heredocs else None
                    accesses = rule.accesses(operands, options, heredoc)
                else:
                    accesses = [Access(rule.op, p) for p in operands if not p.isdigit()] if rule.op else []
                if rule.op and (accesses or not (rule.op == "read" and simple.stdin_fed)):
                    ops.add(rule.op)
        if words and script is None:
            check = VERIFYING.get(words[0].rsplit("/", 1)[-1])
            verifies |= check is not None and check(words)
        for access in accesses + redirects:
            ops.add(access.op)
            if access.resource and access.resource not in _IGNORED_PATHS:
                found.append(Access(access.op, normalize_path(access.resource, cwd)))
    return ShellAccess(frozenset(ops), tuple(found), verifies)
