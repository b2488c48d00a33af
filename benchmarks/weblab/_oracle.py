"""Scripted oracles: solve a weblab task through the real browser with MolmoWeb actions only.

The oracle reads the page (Playwright locators) only to find *where* to act; every change goes through
`WebEnv.step` with coordinate actions, exactly what an agent can do. It proves each task solvable and
gives the judges' agreement study trajectories with known outcomes.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from forge_eval._errors import ForgeError
from forge_eval.benchmarks.web import WebEnv
from forge_eval.benchmarks.weblab._tasks import WebTask


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


async def run_oracle(env: WebEnv, task: WebTask, stop_before_answer: bool = False) -> None:
    """Play `task.oracle` in `env` (already started at the task's site).

    Args:
        stop_before_answer: Skip the final answer (gives a plausible-looking *failed* trajectory for the
            judge agreement study: right pages visited, nothing reported).
    """
    steps: list[tuple[Any, ...]] = list(task.oracle)
    if stop_before_answer and steps and steps[-1][0] == "answer":
        steps = steps[:-1]
    for op, *args in steps:
        await OPS[op](env, *args)
