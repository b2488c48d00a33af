"""`forge-tool` (the command a harness's shell runs) against a served `ToolBridge` of real Inspect tools."""

import subprocess
import sys

import pytest
from inspect_ai.tool import Tool, ToolError, tool

from forge_eval.harnesses._toolbridge import ToolBridge
from forge_eval.proxy import serve_in_thread


@tool
def add() -> Tool:
    async def execute(a: int, b: int, note: str = "") -> str:
        """Add two numbers.

        Args:
          a: First number.
          b: Second number.
          note: Text echoed back.
        """
        return f"{a + b}{note}"

    return execute


@tool
def flaky() -> Tool:
    async def execute(what: str) -> str:
        """Always fails.

        Args:
          what: Anything.
        """
        raise ToolError(f"temporary failure for {what}")

    return execute


@pytest.fixture(scope="module")
def forge_tool(tmp_path_factory):
    bridge = ToolBridge([add(), flaky()])
    command = bridge.install(tmp_path_factory.mktemp("bin"), sys.executable)
    with serve_in_thread(bridge.app()) as server:

        def run(*args: str) -> subprocess.CompletedProcess:
            env = {"FORGE_TOOLS_URL": server.url, "PATH": "/usr/bin:/bin"}
            return subprocess.run([str(command), *args], env=env, capture_output=True, text=True, timeout=60)

        yield run, bridge


def test_key_value_and_json_arguments_reach_the_tool_typed(forge_tool):
    run, bridge = forge_tool
    assert run("add", "a=2", "b=40", "note= apples").stdout == "42 apples\n"
    assert run("add", '{"a": 1, "b": 2}').stdout == "3\n"
    assert bridge.calls == 2


def test_failures_are_messages_with_exit_status_1(forge_tool):
    run, _ = forge_tool
    failed = run("flaky", "what=x")
    assert failed.returncode == 1 and failed.stderr.strip() == "error: temporary failure for x"
    unknown = run("nope")
    assert unknown.returncode == 1 and "unknown tool 'nope'; tools: add, flaky" in unknown.stderr
    missing = run("add", "a=1")
    assert missing.returncode == 1 and "bad arguments for add" in missing.stderr
    malformed = run("add", "a")
    assert malformed.returncode != 0 and "expected key=value" in malformed.stderr


def test_list_prints_the_instructions(forge_tool):
    run, bridge = forge_tool
    listing = run("--list").stdout
    assert listing.strip() == bridge.instructions().strip()
    assert "- add a b [note]: Add two numbers." in listing
