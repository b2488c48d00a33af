"""Claw-Eval trials run by upstream's own code (pinned tree, its venv), with scripted agent and judge models.

The agent and the judge are Inspect `mockllm` models driven by functions: the agent follows a script of
tool calls, the judge reads the assistant's reply in the prompt upstream's grader sends and answers what it
says. Everything between them -- mock services, loop, system prompt, provider, grader, task score -- is
upstream's code, reached through the recording proxies.
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog
from inspect_ai.model import ChatMessage, GenerateConfig, ModelOutput, ModelUsage, get_model

from forge_eval.benchmarks.claweval import TRACE_KEY, claweval
from forge_eval.harnesses import harness_settings
from forge_eval.proxy import read_calls

pytestmark = pytest.mark.slow

T002 = "T002_email_triage"
T002_IDS = [f"msg_{i:03d}" for i in range(1, 9)]
#: What a correct triage says (upstream's grader holds the expected classes; these are a reader's answer).
T002_ANSWER = {
    "msg_001": "needs reply", "msg_002": "needs reply", "msg_003": "FYI", "msg_004": "spam",
    "msg_005": "FYI", "msg_006": "FYI", "msg_007": "needs reply", "msg_008": "spam",
}
USAGE = ModelUsage(input_tokens=10, output_tokens=5, total_tokens=15)


def _out(output: ModelOutput) -> ModelOutput:
    output.usage = USAGE  # mockllm would count tokens with tiktoken, which downloads a file
    return output


class ScriptedAgent:
    """Plays `steps` (tool name, arguments) one per turn, then `answer`; records what each call carried."""

    def __init__(self, steps: list[tuple[str, dict[str, Any]]], answer: str) -> None:
        self.steps, self.answer = steps, answer
        self.seen: list[dict[str, Any]] = []

    def __call__(
        self, messages: list[ChatMessage], tools: Any, tool_choice: Any, config: GenerateConfig
    ) -> ModelOutput:
        system = next((m.text for m in messages if m.role == "system"), None)
        names = [t.name for t in tools]
        self.seen.append({"temperature": config.temperature, "system": system, "tools": names})
        turn = sum(m.role == "assistant" for m in messages)
        if turn < len(self.steps):
            name, arguments = self.steps[turn]
            return _out(ModelOutput.for_tool_call("mockllm", name, arguments))
        return _out(ModelOutput.from_content("mockllm", self.answer))


def reading_judge(
    messages: list[ChatMessage], tools: Any, tool_choice: Any, config: GenerateConfig
) -> ModelOutput:
    """A judge that classifies each email by what the assistant's reply says next to its id (T002's
    grader); to any other prompt it answers with a fixed score."""
    if "Assistant's response:" not in messages[-1].text:  # another grader's prompt: a plain verdict
        return _out(ModelOutput.from_content("mockllm", '{"score": 0.5, "reasoning": "scripted"}'))
    emails, reply = messages[-1].text.split("Assistant's response:", 1)
    reply = reply.split("Output JSON only", 1)[0]  # the format example after it names msg_001
    verdict = {}
    for msg_id in re.findall(r"msg_\d{3}", emails):
        line = next((ln for ln in reply.splitlines() if msg_id in ln), "")
        found = [c for c in ("needs reply", "FYI", "spam") if c.lower() in line.lower()]
        verdict[msg_id] = found[0] if found else "unmentioned"
    return _out(ModelOutput.from_content("mockllm", json.dumps(verdict)))


def run_trial(
    tree: Path, task_id: str, agent: Callable[..., ModelOutput], out: Path, **roles: Any
) -> EvalLog:
    judge = roles.pop("judge", reading_judge)
    model_roles = {"judge": get_model("mockllm/model", custom_outputs=judge)}
    model_roles.update({k: get_model("mockllm/model", custom_outputs=v) for k, v in roles.items()})
    with harness_settings(records_dir=out / "records"):
        (log,) = inspect_eval(
            claweval(task_ids=task_id, data_dir=str(tree)),
            model=get_model("mockllm/model", custom_outputs=agent),
            model_roles=model_roles,
            display="none",
            log_dir=str(out / "logs"),
        )
    assert log.status == "success", log.error
    return log


def _score(log: EvalLog) -> Any:
    (sample,) = log.samples or []
    return sample.scores["claweval_scorer"]


def test_t002_non_answer_fails_as_upstreams_grader_says(
    claweval_tree: Path, claweval_python: Path, tmp_path: Path
) -> None:
    """Lists the categories after one listing call, opens no email: upstream's grader gives 0.26
    (classification 0, tools 0.5 of 0.15, read 0 of 0.20; robustness 1: 0.8 x 0.075 + 0.2)."""
    agent = ScriptedAgent([("gmail_list_messages", {})], "I sort mail into: needs reply, FYI, spam.")
    score = _score(run_trial(claweval_tree, T002, agent, tmp_path))
    assert score.value == pytest.approx(0.26)
    assert score.metadata["passed"] is False and score.metadata["completion"] == pytest.approx(0.075)


def test_t002_done_right_passes(claweval_tree: Path, claweval_python: Path, tmp_path: Path) -> None:
    steps = [("gmail_list_messages", {}), *[("gmail_get_message", {"message_id": i}) for i in T002_IDS]]
    answer = "\n".join(f"{i}: {c}" for i, c in T002_ANSWER.items())
    agent = ScriptedAgent(steps, answer)
    log = run_trial(claweval_tree, T002, agent, tmp_path)
    score = _score(log)
    assert score.value == 1.0 and score.metadata["passed"] is True
    # every agent call is a ModelEvent of the sample and a call record of its proxy
    (sample,) = log.samples or []
    agent_events = [e for e in sample.events if e.event == "model" and e.role is None]
    assert len(agent_events) == len(steps) + 1 == len(agent.seen)
    rollouts = [p.name for p in (tmp_path / "records").iterdir() if p.name.endswith("-agent")]
    (rollout,) = rollouts
    assert len(read_calls(tmp_path / "records", rollout)) == len(steps) + 1
    # the trace upstream's grader read is kept in the log, with its grading event last
    events = [json.loads(line) for line in sample.store[TRACE_KEY].splitlines()]
    assert events[-1]["type"] == "grading_result" and events[-1]["task_score"] == 1.0


def upstream_system_prompt(python: Path, tree: Path, task_id: str, config: str) -> str:
    """The system prompt upstream's own `build_system_prompt` builds for the task under `config` with its
    sandbox tools (those the task does not define itself, as `run_task` adds them), computed by upstream's
    code in its venv."""
    code = (
        "import sys; from claw_eval.config import load_config; "
        "from claw_eval.models.task import TaskDefinition; "
        "from claw_eval.runner.system_prompt import build_system_prompt; "
        "from claw_eval.runner.sandbox_tools import SANDBOX_TOOLS; "
        "cfg = load_config(sys.argv[2]); task = TaskDefinition.from_yaml(sys.argv[1]); "
        "own = {t.name for t in task.tools}; extra = [t for t in SANDBOX_TOOLS if t.name not in own]; "
        "sys.stdout.write(build_system_prompt(task, cfg.prompt, extra_tools=extra))"
    )
    done = subprocess.run(
        [str(python), "-c", code, str(tree / "tasks" / task_id / "task.yaml"), str(tree / config)],
        cwd=tree, env={"PYTHONPATH": str(tree / "src"), "PATH": "/usr/bin:/bin"},
        capture_output=True, text=True, check=True,
    )
    return done.stdout


def test_agent_requests_carry_temperature_0_and_upstreams_system_prompt(
    claweval_tree: Path, claweval_python: Path, tmp_path: Path
) -> None:
    agent = ScriptedAgent([("gmail_list_messages", {})], "done")
    run_trial(claweval_tree, T002, agent, tmp_path)
    expected = upstream_system_prompt(claweval_python, claweval_tree, T002, "config_general.yaml")
    digest = hashlib.sha256(expected.encode()).hexdigest()
    assert {c["temperature"] for c in agent.seen} == {0.0}
    assert {hashlib.sha256(c["system"].encode()).hexdigest() for c in agent.seen} == {digest}
    assert {"gmail_list_messages", "Bash", "Read", "Write"} <= set(agent.seen[0]["tools"])


class ScriptedUser:
    """The simulated user's model: gives the loan details once, then says it is satisfied."""

    def __init__(self) -> None:
        self.prompts: list[str] = []

    def __call__(
        self, messages: list[ChatMessage], tools: Any, tool_choice: Any, config: GenerateConfig
    ) -> ModelOutput:
        self.prompts.append(messages[-1].text)
        reply = "Loan 1.5M, 30 years, rate 4.95%, 60 payments made." if len(self.prompts) == 1 else "[DONE]"
        return _out(ModelOutput.from_content("mockllm", reply))


def test_a_multi_turn_task_runs_with_the_simulated_user_of_the_user_role(
    claweval_tree: Path, claweval_python: Path, tmp_path: Path
) -> None:
    agent = ScriptedAgent([], "What are your loan amount, term and rate?")
    user = ScriptedUser()
    log = run_trial(claweval_tree, "C01zh_mortgage_prepay", agent, tmp_path, user=user)
    (sample,) = log.samples or []
    assert len(user.prompts) == 2 and "What are your loan amount" in user.prompts[0]
    assert len([e for e in sample.events if e.event == "model" and e.role == "user"]) == 2
    events = [json.loads(line) for line in sample.store[TRACE_KEY].splitlines()]
    messages = [e["message"] for e in events if e["type"] == "message"]
    said = [m["content"][0]["text"] for m in messages if m["role"] == "user"]
    assert said[-1] == "[user_agent]\nLoan 1.5M, 30 years, rate 4.95%, 60 payments made."
    meta = events[-1]["user_agent_meta"]
    assert (meta["rounds_used"], meta["done_reached"]) == (1, True)
