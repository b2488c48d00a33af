"""Shell command classification and the per-harness tool tables."""

import string

import pytest
from hypothesis import given
from hypothesis import strategies as st

from forge_eval.analysis.behavior import HARNESS_RULES, classify_shell, rules_for, same_resource

R, W = "read", "write"

CASES = [
    # (command, ops, accesses in order)
    ("cat a.txt", {R}, [(R, "a.txt")]),
    ("head -n 5 f.txt", {R}, [(R, "f.txt")]),
    ("ls", {R}, []),
    ("echo hi > out.txt", {W}, [(W, "out.txt")]),
    ("echo hi >> log.txt 2>/dev/null", {W}, [(W, "log.txt")]),
    ("python run.py 2>&1 | tee run.log", {W}, [(W, "run.log")]),
    ("python run.py", set(), []),
    ("make && ./bin/app", set(), []),
    ("grep -rn TODO src/ > todo.txt", {R, W}, [(R, "src"), (W, "todo.txt")]),
    ("grep -e foo a.py b.py", {R}, [(R, "a.py"), (R, "b.py")]),
    ("sed -i 's/a/b/' x.py", {R, W}, [(R, "x.py"), (W, "x.py")]),
    ("sed -n 1,20p x.py", {R}, [(R, "x.py")]),
    ("cp a.txt b/c.txt", {R, W}, [(R, "a.txt"), (W, "b/c.txt")]),
    ("mv old.py new.py", {W}, [(W, "old.py"), (W, "new.py")]),
    ("rm -rf build/", {W}, [(W, "build")]),
    ("mkdir -p out && touch out/x", {W}, [(W, "out"), (W, "out/x")]),
    ("chmod 755 run.sh", {W}, [(W, "run.sh")]),
    ("cd /repo && cat src/a.py", {R}, [(R, "/repo/src/a.py")]),
    ("cd /repo; cd src && cat ../README.md", {R}, [(R, "/repo/README.md")]),
    ("bash -lc 'echo x > /tmp/o.txt && cat /tmp/o.txt'", {R, W}, [(W, "/tmp/o.txt"), (R, "/tmp/o.txt")]),
    ('sh -c "cd /a && cat b"; cat c', {R}, [(R, "/a/b"), (R, "c")]),
    ("sudo timeout 5 env X=1 cat secret", {R}, [(R, "secret")]),
    ("FOO=1 BAR=2 wc -l data.csv", {R}, [(R, "data.csv")]),
    ("cat > f.py <<'EOF'\nimport os\nprint(1) > 2\nEOF\npython f.py", {W}, [(W, "f.py")]),
    (
        "apply_patch <<'PATCH'\n*** Begin Patch\n*** Add File: new.py\n+x\n"
        "*** Update File: a.py\n@@\n-y\n+z\n*** End Patch\nPATCH",
        {W},
        [(W, "new.py"), (W, "a.py")],
    ),  # fmt: skip
    ("git diff src/a.py && git add src/a.py", {R, W}, [(R, "src/a.py"), (W, "src/a.py")]),
    ("git status", {R}, []),
    ("sort < in.txt > out.txt", {R, W}, [(R, "in.txt"), (W, "out.txt")]),
    ("cat a | grep x | wc -l", {R}, [(R, "a")]),
    ("dd if=/dev/zero of=disk.img bs=1M count=1", {R, W}, [(R, "/dev/zero"), (W, "disk.img")]),
    ("find . -name '*.py' -type f", {R}, [(R, ".")]),
    ("cat ./a/../b.txt", {R}, [(R, "b.txt")]),
    ('echo "unterminated', set(), []),
    ("", set(), []),
    ("# just a comment", set(), []),
    ("cat a.txt  # read it back\necho '#x' > b#c.txt", {R, W}, [(R, "a.txt"), (W, "b#c.txt")]),
    ('grep "#include" main.c', {R}, [(R, "main.c")]),
]


@pytest.mark.parametrize(("command", "ops", "accesses"), CASES, ids=[c[0][:40] for c in CASES])
def test_classify_shell(command: str, ops: set[str], accesses: list[tuple[str, str]]) -> None:
    found = classify_shell(command)
    assert set(found.ops) == ops
    assert [(a.op, a.resource) for a in found.accesses] == accesses


def test_cwd_from_the_harness_applies_to_relative_paths() -> None:
    found = classify_shell("cat a.py /etc/hosts", cwd="/work")
    assert [a.resource for a in found.accesses] == ["/work/a.py", "/etc/hosts"]


_names = st.text(string.ascii_lowercase + string.digits + "_", min_size=1, max_size=12).map(
    lambda s: s + ".txt"
)


@given(_names, _names)
def test_write_then_read_in_one_command_reads_back(written: str, other: str) -> None:
    found = classify_shell(f"echo data > {written} && cat {written} {other}")
    assert [(a.op, a.resource) for a in found.accesses] == [(W, written), (R, written), (R, other)]


@given(_names)
def test_heredoc_bodies_are_not_commands(name: str) -> None:
    body = "rm -rf /\ncat /etc/passwd > stolen"
    found = classify_shell(f"cat > {name} <<EOF\n{body}\nEOF")
    assert [(a.op, a.resource) for a in found.accesses] == [(W, name)]


@pytest.mark.parametrize(
    ("read", "written", "same"),
    [
        ("a.py", "/repo/a.py", True),
        ("/repo/a.py", "a.py", True),
        ("b.py", "/repo/a.py", False),
        ("src", "src/x.py", True),
        ("*.py", "/repo/x.py", True),
        ("*.md", "/repo/x.py", False),
        ("@mail", "@mail:m3", True),
        ("@mail:m3", "@mail:m3", True),
        ("@mail:m4", "@mail:m3", False),
        ("@calendar:m3", "@mail:m3", False),
        ("@mail:m3", "mail", False),
    ],
)
def test_same_resource(read: str, written: str, same: bool) -> None:
    assert same_resource(read, written) is same


def test_every_shell_harness_table_has_a_generic_shell() -> None:
    # (computer-use and browser loops act through their own action spaces, not a shell)
    for name in ("react", "codex", "claude-code", "openclaw"):
        rules = HARNESS_RULES.get(name)
        assert any(rule.generic_shell for rule in rules.tools.values()), name


def test_harness_aliases_and_unknown_harnesses() -> None:
    assert rules_for("codex_cli").name == "codex"
    assert rules_for("claude_code").name == "claude-code"
    merged = rules_for("some_new_harness")
    assert {"bash", "exec_command", "Bash", "exec"} <= set(merged.tools)


@pytest.mark.parametrize(
    ("harness", "tool", "args", "ops", "accesses"),
    [
        ("codex", "exec_command", {"cmd": "cat a.py", "workdir": "/w"}, {R}, [(R, "/w/a.py")]),
        ("codex", "exec_command", {"cmd": ["bash", "-lc", "ls"]}, {R}, []),
        (
            "codex",
            "shell",
            {"command": ["bash", "-lc", "echo x > b.txt && cat b.txt"]},
            {R, W},
            [(W, "b.txt"), (R, "b.txt")],
        ),
        (
            "codex",
            "apply_patch",
            {"input": "*** Begin Patch\n*** Delete File: x.py\n*** End Patch"},
            {W},
            [(W, "x.py")],
        ),
        ("claude_code", "Edit", {"file_path": "/w/a.py", "old_string": "a"}, {W}, [(W, "/w/a.py")]),
        ("claude_code", "Grep", {"pattern": "x", "path": "src"}, {R}, [(R, "src")]),
        ("react", "text_editor", {"command": "view", "path": "/w/a.py"}, {R}, [(R, "/w/a.py")]),
        ("react", "text_editor", {"command": "str_replace", "path": "/w/a.py"}, {W}, [(W, "/w/a.py")]),
        ("openclaw", "write", {"path": "notes.md", "content": "x"}, {W}, [(W, "notes.md")]),
        ("openclaw", "exec", {"command": "cat notes.md"}, {R}, [(R, "notes.md")]),
    ],
)
def test_harness_tool_rules(harness: str, tool: str, args: dict, ops: set, accesses: list) -> None:
    rules = rules_for(harness)
    found = rules.tools[tool].classify(args, rules)
    assert set(found.ops) == ops
    assert [(a.op, a.resource) for a in found.accesses] == accesses
