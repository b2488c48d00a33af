"""The `plan-act` harness: a planner call and a subagent call, then tool-using actions, via the proxy.

Shaped like the harnesses the paper trains (Claude Code's task list, Codex's update_plan, subagents): per
rollout it asks the model for a plan (`update_plan`, forced), has a reviewer subagent (its own system
prompt and tool) comment on the plan, shows both to the main agent, then gives the main agent one
required `set` call per target (a fixed action budget, as a step-limited loop with `tool_choice` forced
has). The plan and the note change nothing in the world: only `set` does, and the verifier
reads the world. Every call is an HTTP request to the recording proxy with the rollout's signed key.
"""

import json
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal

import aiohttp
from inspect_ai.solver import Solver
from inspect_ai.tool import Tool

from forge_eval._errors import UsageError
from forge_eval.harnesses import HARNESSES, Harness, HarnessFacts, TaggingCues
from forge_eval.sandbox import RolloutOutcome, RolloutStatus
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


@dataclass
class PlanActState:
    """What the harness holds between calls: the main agent's conversation, the plan, the world, the
    calls made so far. Kept at a cut, it is what `carry` resumes the rollout from."""

    task: SlotTask
    main: list[dict[str, Any]]
    world: SlotWorld
    plan: str = ""
    calls: int = 0
    answer: str | None = None
    done: bool = False

    @classmethod
    def start(cls, task: SlotTask) -> "PlanActState":
        main = [{"role": "system", "content": MAIN_SYSTEM}, {"role": "user", "content": task.goal}]
        return cls(task, main, SlotWorld(task))


async def _plan(client: aiohttp.ClientSession, url: str, key: str, state: PlanActState) -> None:
    body = {"model": "policy", "messages": state.main, "tools": [PLAN_TOOL], "tool_choice": "required"}
    turn = await _chat(client, url, key, body)
    state.main.append(turn)
    state.plan = (_arguments(turn) or ("", {}))[1].get("plan", "")
    state.main.append({"role": "tool", "tool_call_id": turn["tool_calls"][0]["id"], "content": "ok"})


async def _review(client: aiohttp.ClientSession, url: str, key: str, state: PlanActState) -> None:
    review = [
        {"role": "system", "content": REVIEWER_SYSTEM},
        {"role": "user", "content": f"review {state.plan} {state.task.goal}"},
    ]
    body = {"model": "policy", "messages": review, "tools": [REPORT_TOOL], "tool_choice": "required"}
    note = (_arguments(await _chat(client, url, key, body)) or ("", {}))[1].get("note", "")
    state.main.append({"role": "user", "content": f"note {note}"})


async def _act(client: aiohttp.ClientSession, url: str, key: str, state: PlanActState) -> None:
    body = {"model": "policy", "messages": state.main, "tools": [SET_TOOL], "tool_choice": "required"}
    turn = await _chat(client, url, key, body)
    state.main.append(turn)
    call = _arguments(turn)
    if call is None:
        state.answer, state.done = turn.get("content") or "", True
        return
    name, args = call
    world = state.world
    result = world.set(str(args.get("slot")), int(args.get("value", 0))) if name == "set" else "error"
    state.main.append({"role": "tool", "tool_call_id": turn["tool_calls"][0]["id"], "content": result})


Phase = Callable[[aiohttp.ClientSession, str, str, PlanActState], Awaitable[None]]
# one call each: the plan, the reviewer's note, then the action turns
PHASES: tuple[Phase, ...] = (_plan, _review, *[_act] * MAX_ACTION_CALLS)
CALLS = len(PHASES)
# the calls after which a rollout can be resumed: its state is then the main conversation and the world
# (after the plan alone, the review still to come would open the rollout's record, and role tagging takes
# a record's first tool-offering call for the main agent's)
RESUMABLE_AFTER = frozenset(range(2, CALLS))


CutKind = Literal["timeout", "crash"]


@dataclass(frozen=True)
class Cut:
    """An injected failure: the harness stops after `after` calls of the rollout, by a `timeout` (the
    deadline passed) or a `crash` (the harness exited non-zero without an answer)."""

    after: int
    kind: CutKind

    def outcome(self) -> RolloutOutcome:
        status, exit_code = CUT_ENDINGS[self.kind]
        return RolloutOutcome(status, exit_code)


CUT_ENDINGS: dict[str, tuple[RolloutStatus, int | None]] = {
    "timeout": ("timeout", None),
    "crash": ("harness_crash", 1),
}


def draw_cut(rate: float, points: tuple[int, ...], seed: int, step: int, rollout: int) -> Cut | None:
    """Whether training rollout `rollout` of `step` is cut, where and how: a pure function of the run's
    seed, so every policy of a seed sees the same failures on the same rollouts."""
    if rate <= 0:
        return None
    rng = random.Random(f"cut:{seed}:{step}:{rollout}")
    if rng.random() >= rate:
        return None
    return Cut(rng.choice(points), rng.choice(("timeout", "crash")))


async def run_plan_act(
    client: aiohttp.ClientSession,
    base_url: str,
    api_key: str,
    task: SlotTask,
    *,
    state: PlanActState | None = None,
    cut: Cut | None = None,
) -> RolloutOutcome:
    """One rollout of `task` through the proxy at `base_url` (the rollout's `/r/<id>/<attempt>` prefix).

    `state` resumes a rollout from where it was cut (it is updated in place, so the caller holds the
    state at a cut); `cut` stops the harness after that many calls of the rollout.
    """
    url = base_url.rstrip("/") + "/v1/chat/completions"
    state = state or PlanActState.start(task)
    for phase in PHASES[state.calls :]:
        if cut is not None and state.calls >= cut.after:
            return cut.outcome()
        await phase(client, url, api_key, state)
        state.calls += 1
        if state.done:
            break
    reward, success, output = state.world.verify()
    return RolloutOutcome(
        "completed", 0, reward=reward, verifier_output={"success": success, **output}, answer=state.answer
    )
