"""The atlas-loop harness is upstream's loop: a tool call whose arguments are not JSON aborts the run and
upstream's completion script retries it from the start (after its backoff), as upstream does; the
answer is upstream's extraction. The model is a scripted Inspect model API reached through the sample's
recording proxy; the tool is a plain Inspect tool (no MCP server needed)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import Sample
from inspect_ai.model import (
    ChatCompletionChoice,
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageTool,
    GenerateConfig,
    ModelAPI,
    ModelOutput,
    get_model,
    modelapi,
)
from inspect_ai.model._call_tools import tool_parse_error_message
from inspect_ai.tool import ToolCall, ToolChoice, ToolInfo, tool

from forge_eval.benchmarks.mcpatlas import atlas_agent
from forge_eval.harnesses import HARNESSES
from tests.benchmarks._usage import counted

BAD_ARGUMENTS = '{"expression": "2+2"'  # the closing brace is missing
_CALLS: list[list[ChatMessage]] = []
_RAN: list[str] = []


def _parse_error() -> str:
    try:
        json.loads(BAD_ARGUMENTS)
    except json.JSONDecodeError as e:
        return tool_parse_error_message(BAD_ARGUMENTS, e)
    raise AssertionError("the arguments parsed")


@modelapi(name="atlas-scripted-agent")
class ScriptedAgentAPI(ModelAPI):
    """First call: a tool call with unparseable arguments (as Inspect reports one); later: a good call,
    then the answer once the tool has answered."""

    async def generate(
        self, input: list[ChatMessage], tools: list[ToolInfo], tool_choice: ToolChoice, config: GenerateConfig
    ) -> ModelOutput:
        _CALLS.append(list(input))
        if any(isinstance(m, ChatMessageTool) for m in input):
            output = ModelOutput.from_content(self.model_name, "The result is 4.")
        else:
            error = _parse_error() if len(_CALLS) == 1 else None
            arguments = {} if error else {"expression": "2+2"}
            call = ToolCall(id=f"c{len(_CALLS)}", function="calculator_calculate", arguments=arguments,
                            parse_error=error)
            message = ChatMessageAssistant(content="", tool_calls=[call], model=self.model_name)
            choice = ChatCompletionChoice(message=message, stop_reason="tool_calls")
            output = ModelOutput(model=self.model_name, choices=[choice])
        return counted(output)


@tool(name="calculator_calculate")
def calculate():  # type: ignore[no-untyped-def]
    async def execute(expression: str) -> str:
        """Calculate an arithmetic expression.

        Args:
            expression: The expression.
        """
        _RAN.append(expression)
        return "4" if expression == "2+2" else "?"

    return execute


@pytest.mark.slow
def test_bad_json_tool_call_aborts_the_run_and_upstream_retries_it(
    upstream_trees: Path, tmp_path: Path
) -> None:
    tree = upstream_trees / "scaleapi+mcp-atlas@b290e67"
    harness = HARNESSES.get("atlas-loop")
    sample = Sample(id="t1", input="What is 2+2? Use the calculator.", metadata={"upstream_tree": str(tree)})
    [log] = inspect_eval(
        Task(dataset=[sample], solver=harness.solver(tools=[calculate()], system_prompt="")),
        model="atlas-scripted-agent/agent",
        log_dir=str(tmp_path / "logs"),
        display="none",
    )
    assert log.status == "success", log.error
    [done] = log.samples or []
    # attempt 1: the bad call aborted the run (no tool ran, nothing answered to the model); attempt 2 began
    # from the prompt again: 3 model calls in all, the second with only the user's message
    assert len(_CALLS) == 3 and [m.role for m in _CALLS[1]] == ["user"]
    assert _RAN == ["2+2"]
    info = next(e.data for e in done.events if e.event == "info" and e.source == "atlas-loop")
    assert info["attempts"] == 2 and info["answer_found"]
    model_events = [e for e in done.events if e.event == "model"]
    assert len(model_events) == 3  # every call of upstream's loop went through the proxy into the log
    gap = (model_events[1].timestamp - model_events[0].timestamp).total_seconds()
    assert gap >= 5  # upstream's backoff before the second attempt (5 s plus jitter)
    assert done.output.completion == "The result is 4."  # upstream's answer extraction
    assert [m.role for m in done.messages] == ["user", "assistant", "tool", "assistant"]
    assert done.messages[2].text == "4"


@pytest.mark.slow
def test_another_harness_runs_the_task_without_upstreams_loop(upstream_trees: Path, tmp_path: Path) -> None:
    """The benchmark's solver hands its tools to any harness; only atlas-loop reads the tree."""
    metadata = {
        "servers": [],
        "enabled_tools": [],
        "left_out_tools": [],
        "seeded_data": None,
        "upstream_tree": str(upstream_trees / "scaleapi+mcp-atlas@b290e67"),
    }
    sample = Sample(id="t2", input="Say hi.", metadata=metadata)
    task = Task(dataset=[sample], solver=atlas_agent(HARNESSES.get("react")), message_limit=4)
    submit = counted(ModelOutput.for_tool_call("mockllm/model", "submit", {"answer": "hi"}))
    agent = get_model("mockllm/model", custom_outputs=[submit])
    [log] = inspect_eval(task, model=agent, log_dir=str(tmp_path / "logs"), display="none")
    assert log.status == "success", log.error
    [done] = log.samples or []
    assert done.error is None and done.output.completion.endswith("hi")  # react's submitted answer


@tool(name="slow_wait")
def slow_wait():  # type: ignore[no-untyped-def]
    async def execute(seconds: float) -> str:
        """Wait.

        Args:
            seconds: How long.
        """
        await asyncio.sleep(seconds)
        return "waited"

    return execute


@modelapi(name="atlas-slow-agent")
class SlowAgentAPI(ModelAPI):
    """Calls the slow tool, then answers once it has answered."""

    async def generate(
        self, input: list[ChatMessage], tools: list[ToolInfo], tool_choice: ToolChoice, config: GenerateConfig
    ) -> ModelOutput:
        if any(isinstance(m, ChatMessageTool) for m in input):
            output = ModelOutput.from_content(self.model_name, "Done waiting.")
        else:
            output = ModelOutput.for_tool_call(self.model_name, "slow_wait", {"seconds": 60})
        return counted(output)


@pytest.mark.slow
def test_an_attempt_past_upstreams_timeout_is_given_up(
    upstream_trees: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Upstream's script reads its per-attempt timeout and attempt count from the environment (defaults
    240 s and 3); with 2 s and 1 attempt, a tool that takes 60 s leaves the task without an answer, which
    upstream then scores as an empty response, and the sample ends then: the loop's run that upstream's
    script gave up on is cancelled, not waited for."""
    monkeypatch.setenv("CLIENT_TIMEOUT", "2")
    monkeypatch.setenv("MAX_RETRY_ATTEMPTS", "1")
    metadata = {"upstream_tree": str(upstream_trees / "scaleapi+mcp-atlas@b290e67")}
    sample = Sample(id="t3", input="Wait 6 seconds.", metadata=metadata)
    solver = HARNESSES.get("atlas-loop").solver(tools=[slow_wait()], system_prompt="")
    [log] = inspect_eval(
        Task(dataset=[sample], solver=solver),
        model="atlas-slow-agent/agent",
        log_dir=str(tmp_path / "logs"),
        display="none",
    )
    assert log.status == "success", log.error
    [done] = log.samples or []
    info = next(e.data for e in done.events if e.event == "info" and e.source == "atlas-loop")
    assert info["attempts"] == 1 and not info["answer_found"]
    assert info["wall_s"] < 30  # not the tool's 60 s
    assert done.output.completion == ""


@pytest.mark.slow
def test_the_time_limit_ends_a_sample_promptly(upstream_trees: Path, tmp_path: Path) -> None:
    """A sample past its time limit ends then, with upstream's attempt still running (its loop's run, the
    tool call in it): the limit is the sample's error, and the next sample does not wait for that run."""
    metadata = {"upstream_tree": str(upstream_trees / "scaleapi+mcp-atlas@b290e67")}
    samples = [Sample(id=f"t{i}", input="Wait 60 seconds.", metadata=metadata) for i in (4, 5)]
    solver = HARNESSES.get("atlas-loop").solver(tools=[slow_wait()], system_prompt="")
    [log] = inspect_eval(
        Task(dataset=samples, solver=solver, time_limit=3),
        model="atlas-slow-agent/agent",
        log_dir=str(tmp_path / "logs"),
        display="none",
        max_samples=1,
    )
    assert log.status == "success", log.error
    for done in log.samples or []:
        assert done.limit is not None and done.limit.type == "time"
        assert done.total_time is not None and done.total_time < 30  # not the tool's 60 s
