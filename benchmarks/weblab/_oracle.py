"""Scripted oracles: solve a weblab task through the real browser with MolmoWeb actions only.

The oracle reads the page (Playwright locators) only to find *where* to act; every change goes through
`WebEnv.step` with coordinate actions, exactly what an agent can do. It proves each task solvable and
gives the judges' agreement study trajectories with known outcomes.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from inspect_ai.solver import Generate, Solver, TaskState, solver

from forge_eval._errors import ForgeError
from forge_eval.benchmarks.web import WebEnv, current_env
from forge_eval.benchmarks.weblab._data import TASKS, WebTask, task_of


async def _point(env: WebEnv, selector: str) -> tuple[float, float]:
    """The centre of the first element matching `selector`, scrolling it into view with wheel actions."""
    locator = env.page.locator(selector).first
    for _ in range(6):
        box = await locator.bounding_box(timeout=5000)
        if box is None:
            raise ForgeError(f"oracle: '{selector}' is not visible on {env.page.url}")
        x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
        if 0 <= y < env.config.height:
            return x, y
        await env.step({"name": "scroll", "delta_y": y - env.config.height / 2})
    raise ForgeError(f"oracle: could not scroll '{selector}' into view")


async def _click(env: WebEnv, selector: str) -> None:
    x, y = await _point(env, selector)
    await env.step({"name": "mouse_click", "x": x, "y": y})


async def _fill(env: WebEnv, selector: str, text: str) -> None:
    await _click(env, selector)
    await env.step({"name": "keyboard_press", "key": "Control+a"})
    await env.step({"name": "keyboard_type", "text": text})


async def _press(env: WebEnv, key: str) -> None:
    await env.step({"name": "keyboard_press", "key": key})


async def _answer(env: WebEnv, text: str) -> None:
    await env.step({"name": "send_msg_to_user", "msg": text})


OPS: dict[str, Callable[..., Awaitable[None]]] = {
    "click": _click,
    "fill": _fill,
    "press": _press,
    "answer": _answer,
}


async def run_oracle(env: WebEnv, task: WebTask, variant: str = "solve") -> None:
    """Play `task.oracle` in `env` (already started at the task's site).

    Args:
        variant: "solve" plays the script; "wrong" makes a plausible failure for the judge agreement
            study: an information task answers with another task's answer from the same site, an action
            task skips its last effective action but still reports "Done.".
    """
    steps: list[tuple[Any, ...]] = list(task.oracle)
    if variant == "wrong":
        if task.kind == "action":
            steps = [*steps[:-2], ("answer", "Done.")]
        else:
            steps = [*steps[:-1], ("answer", _decoy_answer(task))]
    elif variant != "solve":
        raise ValueError(f"oracle variant must be 'solve' or 'wrong', got {variant!r}")
    for op, *args in steps:
        await OPS[op](env, *args)


def _decoy_answer(task: WebTask) -> str:
    others = [t for t in TASKS if t.site == task.site and t.kind == "info" and t.id != task.id]
    return str(others[0].oracle[-1][1]) if others else "I could not find it."


@solver
def oracle_agent(variant: str = "solve") -> Solver:
    """The scripted oracle as an Inspect solver (the judge agreement study's "agent")."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        env = current_env()
        await run_oracle(env, task_of(state.sample_id), state.metadata.get("oracle_variant", variant))
        state.output.completion = env.trajectory.final_response
        return state

    return solve
