"""A MolmoWeb episode in a real browser, driven by a scripted model, runs as MolmoWeb's own runner runs it:
10 past steps in the prompt, one step per agent action, ended only by `[EXIT]`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import Sample
from inspect_ai.model import ChatMessage, GenerateConfig, ModelOutput, ModelUsage, get_model
from inspect_ai.solver import Generate, Solver, TaskState, solver

from forge_eval.benchmarks.web import BrowserConfig, WebEnv
from forge_eval.harnesses.molmoweb import molmoweb_agent

TREE_NAME = "allenai+molmoweb@6a841b4"
# The test page's text field is centred at (120, 115) px of 1280x720: type-at-a-point takes per-mille.
TYPE_AT = {"name": "gemini_type_text_at", "x": 93.75, "y": 159.7, "text": "lasagna", "press_enter": True}
HOVER = {"name": "hover_at", "x": 20.3, "y": 5.6}
SCRIPT: list[str] = [
    json.dumps({"thought": "type the dish", "action": TYPE_AT}),
    "I am not sure what to do next.",  # unparseable: upstream's agent makes it report_infeasible
    json.dumps({"thought": "answer", "action": {"name": "send_msg_to_user", "msg": "[ANSWER] lasagna"}}),
    *(json.dumps({"thought": f"look {i}", "action": HOVER}) for i in range(4, 13)),
    json.dumps({"thought": "done", "action": {"name": "send_msg_to_user", "msg": "[EXIT]"}}),
]


@solver
def start(env: WebEnv, url: str) -> Solver:
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        await env.start(url, task="type lasagna and press Enter")
        return state

    return solve


@solver
def finish(env: WebEnv, seen: dict[str, Any]) -> Solver:
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        seen["log"] = await env.page.inner_text("#log")
        await env.close()
        return state

    return solve


def test_molmoweb_runner_episode(
    tmp_path: Path, test_site: str, site_config: BrowserConfig, upstream_trees: Path
) -> None:
    prompts: list[str] = []

    def model(input: list[ChatMessage], tools: Any, tool_choice: Any, config: GenerateConfig) -> ModelOutput:
        prompts.append(input[0].text)
        out = ModelOutput.from_content(model="mockllm", content=SCRIPT[len(prompts) - 1])
        out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return out

    env = WebEnv(site_config, max_steps=30)
    seen: dict[str, Any] = {}
    agent = molmoweb_agent(episode=env, observation="screenshot", molmoweb_tree=upstream_trees / TREE_NAME)
    task = Task(dataset=[Sample(input="t")], solver=[start(env, test_site + "/"), agent, finish(env, seen)])
    (log,) = inspect_eval(
        task, model=get_model("mockllm/vision", custom_outputs=model), log_dir=str(tmp_path), display="none"
    )
    assert log.status == "success", log.error
    steps = env.trajectory.steps
    # every reply was one step; neither the unreadable reply nor the answer ended the episode
    assert len(prompts) == len(steps) == len(SCRIPT) == 13
    assert steps[0].action["name"] == "gemini_type_text_at" and steps[0].error is None
    # click, select-all, the text and Enter in that one step (then the hovers)
    assert seen["log"].split() == ["enter:lasagna", "hover"]
    assert steps[1].action["name"] == "report_infeasible"
    assert steps[-1].action == {"name": "send_msg_to_user", "msg": "[EXIT]"}
    assert env.trajectory.final_response == "[ANSWER] lasagna"
    # the last request shows the 10 steps before it (3-12), as MolmoWeb's runner configures its agent
    last = prompts[-1]
    assert [f"## Step {i}\n" in last for i in range(1, 13)] == [False, False] + [True] * 10
