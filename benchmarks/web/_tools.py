"""The browser as Inspect tools, one per MolmoWeb action, so any tool-calling agent can drive it."""

from __future__ import annotations

from typing import Any

from inspect_ai.tool import ContentImage, ContentText, Tool, ToolDef, ToolError, ToolParam, ToolParams
from inspect_ai.tool._tool import ToolResult

from forge_eval.benchmarks.web._actions import ACTIONS, ActionError, ActionSpec
from forge_eval.benchmarks.web._binding import current_env
from forge_eval.benchmarks.web._trajectory import Observation

_JSON_TYPES = {float: "number", int: "integer", str: "string", bool: "boolean"}


def observation_content(obs: Observation, screenshot: bool, error: str | None = None) -> list[Any]:
    """An observation as tool-result content: page facts as text, the screenshot as an image.

    With the element list on (text-only models) the text also carries the page (elements + ARIA), since
    such a model has no other way to read it; coordinates are viewport pixels, as the tools take them.
    """
    lines = [f"url: {obs.url}", f"title: {obs.title}"]
    if len(obs.tabs) > 1:
        lines.append(
            "tabs: " + "; ".join(f"[{t['index']}{'*' if t['active'] else ''}] {t['title']}" for t in obs.tabs)
        )
    if error:
        lines.insert(0, f"error: {error}")
    if obs.elements is not None:
        lines.append(obs.page_text())
    content: list[Any] = [ContentText(text="\n".join(lines))]
    if screenshot:
        content.append(ContentImage(image=obs.screenshot_data_uri()))
    return content


def _tool(spec: ActionSpec, screenshot: bool) -> Tool:
    async def execute(**kwargs: Any) -> ToolResult:
        env = current_env()
        before = len(env.trajectory.steps)
        try:
            obs = await env.step({"name": spec.name, **kwargs})
        except ActionError as e:  # the episode ended: the model is told, the sample goes on to scoring
            raise ToolError(str(e)) from None
        error = env.trajectory.steps[before].error if len(env.trajectory.steps) > before else None
        return observation_content(obs, screenshot, error)

    params = ToolParams(
        properties={
            **{k: ToolParam(type=_JSON_TYPES[t], description=k) for k, t in spec.required.items()},
            **{
                k: ToolParam(type=_JSON_TYPES.get(type(d), "string"), description=k, default=d)
                for k, d in spec.optional.items()
            },
        },
        required=list(spec.required),
    )
    return ToolDef(execute, name=f"browser_{spec.name}", description=spec.doc, parameters=params).as_tool()


def browser_tools(screenshot: bool = True) -> list[Tool]:
    """One Inspect tool per browser action (`browser_mouse_click`, `browser_goto`, ...).

    Args:
        screenshot: Return the screenshot with each result (off for text-only models).
    """
    return [_tool(spec, screenshot) for _, spec in ACTIONS.items()]
