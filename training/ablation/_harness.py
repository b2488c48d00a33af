"""The `plan-act` harness: a planner call and a subagent call, then tool-using actions, via the proxy.

Shaped like the harnesses the paper trains (Claude Code's task list, Codex's update_plan, subagents): per
rollout it asks the model for a plan (`update_plan`, forced), has a reviewer subagent (its own system
prompt and tool) comment on the plan, shows both to the main agent, then gives the main agent one
required `set` call per target (a fixed action budget, as a step-limited loop with `tool_choice` forced
has). The plan and the note change nothing in the world: only `set` does, and the verifier
reads the world. Every call is an HTTP request to the recording proxy with the rollout's signed key.
"""

import json
from typing import Any

import aiohttp
from inspect_ai.solver import Solver
from inspect_ai.tool import Tool

from forge_eval._errors import UsageError
from forge_eval.harnesses import HARNESSES, Harness, HarnessFacts, TaggingCues
from forge_eval.sandbox import RolloutOutcome
from forge_eval.training.ablation._slots import TARGETS_PER_TASK, SlotTask, SlotWorld

HARNESS = "plan-act"
MAIN_SYSTEM = "you act on slots"
REVIEWER_SYSTEM = "you review plans"
# one action per target: a spare turn only added a third random `set` whose noise drowned the signal.
# Every action turn is a required tool call: when the agent could stop, stopping after one right `set`
# (reward 0.5) beat exploring a second one (a wrong slot halves the reward), and a policy learning from
# scratch settled there ("set d 2 ; done" on every task, reward exactly 0.5, success 0).
MAX_ACTION_CALLS = TARGETS_PER_TASK


def _tool(name: str, **properties: str) -> dict[str, Any]:
    schema = {"type": "object", "properties": {k: {"type": v} for k, v in properties.items()}}
    return {"type": "function", "function": {"name": name, "parameters": schema}}


PLAN_TOOL = _tool("update_plan", plan="string")
REPORT_TOOL = _tool("report", note="string")
SET_TOOL = _tool("set", slot="string", value="integer")


class PlanActHarness(Harness):
    """The ablation's harness in the harness registry, for its facts: role tagging reads the harness's
    cues from there (`facts_for`), like those of Codex or Claude Code. It runs only under the ablation."""

    name = HARNESS
    description = (
        "planner + reviewer subagent + set actions on the slot world (forge-eval ablate credit only)"
    )
    facts = HarnessFacts(
        name=HARNESS,
        tagging=TaggingCues(
            subagent_by_thread=False, aux_without_tools=True, planning_tools=("update_plan",)
        ),
    )

    def requirements(self) -> list[str]:
        return ["plan-act is the credit ablation's own harness: run it with `forge-eval ablate credit`"]

    def agent(self, *, tools: list[Tool], system_prompt: str, **options: Any) -> Solver:
        raise UsageError(
            "the plan-act harness drives the slot world of the credit ablation, not benchmark tasks",
            hint="use `forge-eval ablate credit`; for benchmarks pick react, codex, claude-code or openclaw",
        )


if HARNESS not in HARNESSES:
    HARNESSES.register(HARNESS, PlanActHarness())


async def _chat(client: aiohttp.ClientSession, url: str, key: str, body: dict[str, Any]) -> dict[str, Any]:
    async with client.post(url, json=body, headers={"Authorization": f"Bearer {key}"}) as response:
        response.raise_for_status()
        return (await response.json())["choices"][0]["message"]


def _arguments(message: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    calls = message.get("tool_calls") or []
    if not calls:
        return None
    function = calls[0]["function"]
    return function["name"], json.loads(function["arguments"] or "{}")


async def run_plan_act(
    client: aiohttp.ClientSession, base_url: str, api_key: str, task: SlotTask
) -> RolloutOutcome:
    """One rollout of `task` through the proxy at `base_url` (the rollout's `/r/<id>/<attempt>` prefix)."""
    url = base_url.rstrip("/") + "/v1/chat/completions"
    world = SlotWorld(task)
    main: list[dict[str, Any]] = [
        {"role": "system", "content": MAIN_SYSTEM},
        {"role": "user", "content": task.goal},
    ]
    plan_turn = await _chat(
        client,
        url,
        api_key,
        {"model": "policy", "messages": main, "tools": [PLAN_TOOL], "tool_choice": "required"},
    )
    main.append(plan_turn)
    plan = (_arguments(plan_turn) or ("", {}))[1].get("plan", "")
    main.append({"role": "tool", "tool_call_id": plan_turn["tool_calls"][0]["id"], "content": "ok"})
    review = [
        {"role": "system", "content": REVIEWER_SYSTEM},
        {"role": "user", "content": f"review {plan} {task.goal}"},
    ]
    note_turn = await _chat(
        client,
        url,
        api_key,
        {"model": "policy", "messages": review, "tools": [REPORT_TOOL], "tool_choice": "required"},
    )
    note = (_arguments(note_turn) or ("", {}))[1].get("note", "")
    main.append({"role": "user", "content": f"note {note}"})
    answer_text = None
    for _ in range(MAX_ACTION_CALLS):
        body = {"model": "policy", "messages": main, "tools": [SET_TOOL], "tool_choice": "required"}
        turn = await _chat(client, url, api_key, body)
        main.append(turn)
        call = _arguments(turn)
        if call is None:
            answer_text = turn.get("content") or ""
            break
        name, args = call
        result = world.set(str(args.get("slot")), int(args.get("value", 0))) if name == "set" else "error"
        main.append({"role": "tool", "tool_call_id": turn["tool_calls"][0]["id"], "content": result})
    reward, success, output = world.verify()
    return RolloutOutcome(
        "completed", 0, reward=reward, verifier_output={"success": success, **output}, answer=answer_text
    )
