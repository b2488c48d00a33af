"""A real bridged-harness log: Inspect's in-process `agent_bridge()` and a scripted OpenAI client loop.

The "harness" here is a small Codex-like loop: it calls `chat.completions` through the bridge, runs
each `exec_command` in a real shell (in a temp dir) and sends the output back as a tool message, the
way Codex reports it ("Process exited with code N"). Inspect logs only ModelEvents for it, exactly as
for Codex or Claude Code, so the reader must recover calls from outputs and results from inputs.
The model is Inspect's `mockllm` with a scripted tool-call sequence per task.
"""

import json
import math
import subprocess
import tempfile
from pathlib import Path

import pytest
from inspect_ai import Task, eval
from inspect_ai.agent import Agent, AgentState, agent, agent_bridge
from inspect_ai.dataset import Sample
from inspect_ai.event import ToolEvent
from inspect_ai.model import ChatMessage, ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import includes
from openai import AsyncOpenAI

from forge_eval.analysis.behavior import capability_values, read_transcripts

EXEC_COMMAND = {
    "type": "function",
    "function": {
        "name": "exec_command",
        "description": "Run a shell command.",
        "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}, "required": ["cmd"]},
    },
}
# task -> the model's turns: a command to run, or final text
SCRIPTS: dict[str, list[str | dict]] = {
    "verify": [{"cmd": "printf hello > note.txt"}, {"cmd": "cat note.txt"}, "done"],
    "broken": [{"cmd": "ls missing_dir"}, {"cmd": "echo ok > fixed.txt"}, "gave up"],
    "malformed": [{"cmd": "echo x | tee log.txt"}, '<tool_call>{"name": "exec_command", "arguments": {"cmd"'],
}


def _scripted(input: list[ChatMessage], tools, tool_choice, config) -> ModelOutput:
    task = input[0].text
    step = SCRIPTS[task][sum(1 for m in input if m.role == "assistant")]
    if isinstance(step, dict):
        output = ModelOutput.for_tool_call("mockllm/model", "exec_command", step)
    else:
        output = ModelOutput.from_content("mockllm/model", step)
    output.usage = ModelUsage(input_tokens=10, output_tokens=5, total_tokens=15)
    return output


@agent
def scripted_codex() -> Agent:
    async def execute(state: AgentState) -> AgentState:
        async with agent_bridge(state) as bridge:
            client = AsyncOpenAI(base_url="http://127.0.0.1:9/v1", api_key="unused")
            messages: list[dict] = [{"role": "user", "content": state.messages[0].text}]
            workdir = tempfile.mkdtemp(prefix="forge-bridge-")
            for _ in range(8):
                response = await client.chat.completions.create(
                    model="inspect", messages=messages, tools=[EXEC_COMMAND]
                )
                message = response.choices[0].message
                messages.append(message.model_dump(exclude_none=True))
                if not message.tool_calls:
                    break
                for call in message.tool_calls:
                    command = json.loads(call.function.arguments)["cmd"]
                    done = subprocess.run(
                        ["bash", "-c", command], cwd=workdir, capture_output=True, text=True, timeout=30
                    )
                    output = f"Process exited with code {done.returncode}\n{done.stdout}{done.stderr}"
                    messages.append({"role": "tool", "tool_call_id": call.id, "content": output})
        return bridge.state

    return execute


@pytest.fixture(scope="module")
def bridged_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    log_dir = tmp_path_factory.mktemp("bridge-logs")
    task = Task(
        dataset=[Sample(id=name, input=name, target="done") for name in SCRIPTS],
        solver=scripted_codex(),
        scorer=includes(),
    )
    model = get_model("mockllm/model", custom_outputs=_scripted)
    [log] = eval(task, model=model, log_dir=str(log_dir), display="none", max_samples=1, seed=0)
    assert log.status == "success", log.error
    return Path(log.location)


def test_bridged_log_has_no_tool_events(bridged_log: Path) -> None:
    from inspect_ai.log import read_eval_log

    log = read_eval_log(str(bridged_log))
    assert all(not isinstance(e, ToolEvent) for s in log.samples for e in s.events)


def test_reader_recovers_calls_results_and_errors_from_model_events(bridged_log: Path) -> None:
    t = read_transcripts([bridged_log], harness="codex")
    calls = t.calls.set_index(["task_id", "call_index"])
    assert calls.loc[("verify", 1), "result"].startswith("Process exited with code 0\nhello")
    assert calls.loc[("verify", 0), "access"] == "write"
    assert calls.loc[("broken", 0), "error_kind"] == "nonzero_exit"
    assert calls.loc[("broken", 1), "error_kind"] == ""
    assert calls.loc[("malformed", 1), "error_kind"] == "malformed"
    assert set(t.calls.loc[t.calls["tool"] != "", "tool"]) == {"exec_command"}
    assert t.calls["generic_shell"].sum() == 5
    rollouts = t.rollouts.set_index("task_id")
    assert rollouts["ended_malformed"].to_dict() == {"broken": False, "malformed": True, "verify": False}
    assert rollouts["passed"].to_dict() == {"broken": False, "malformed": False, "verify": True}


def test_capabilities_of_the_bridged_run(bridged_log: Path) -> None:
    t = read_transcripts([bridged_log], harness="codex")
    values = capability_values(t.rollouts, t.calls).set_index(t.rollouts["task_id"])
    assert values.loc["verify", "self_verification"] == 100.0
    assert values.loc["broken", "self_verification"] == 0.0
    assert values.loc["broken", "error_recovery"] == 0.0
    assert math.isnan(values.loc["verify", "error_recovery"])
    assert values.loc["malformed", "format_robustness"] == 0.0
