"""The MolmoWeb JSON action set: names, arguments, and how each one drives the page.

An action is `{"name": ..., **args}` with coordinates in CSS pixels of the viewport (the MolmoWeb harness
converts its percent coordinates before calling). Each action lives in `ACTIONS` so that the environment,
the Inspect tools and the harness prompt all read one definition.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from forge_eval._errors import UsageError
from forge_eval._registry import Registry

if TYPE_CHECKING:
    from forge_eval.benchmarks.web._env import WebEnv

Run = Callable[["WebEnv", dict[str, Any]], Awaitable[None]]


class ActionError(UsageError):
    """An action the environment cannot perform as given (unknown name, bad or missing argument)."""


@dataclass(frozen=True)
class ActionSpec:
    """One action: its arguments (name -> type, with defaults for optional ones) and its effect."""

    name: str
    doc: str
    run: Run
    required: dict[str, type] = field(default_factory=dict)
    optional: dict[str, Any] = field(default_factory=dict)
    #: Ends the episode (an answer to the user or a report that the task cannot be done).
    terminal: bool = False
    #: Changes nothing in the page (no settle needed).
    passive: bool = False


ACTIONS: Registry[ActionSpec] = Registry("browser action")


@dataclass(frozen=True)
class Action:
    """A validated action: its spec's name and complete arguments."""

    name: str
    args: dict[str, Any]

    @property
    def spec(self) -> ActionSpec:
        return ACTIONS.get(self.name)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, **self.args}


def parse_action(raw: dict[str, Any]) -> Action:
    """Validate `{"name": ..., **args}` against the action's spec (coerces numbers, fills defaults)."""
    if not isinstance(raw, dict) or "name" not in raw:
        raise ActionError(f"an action must be an object with a 'name', got {raw!r}")
    try:
        spec = ACTIONS.get(str(raw["name"]))
    except UsageError as e:
        raise ActionError(str(e)) from None
    args: dict[str, Any] = {}
    for key, kind in spec.required.items():
        if key not in raw or raw[key] is None:
            raise ActionError(f"action '{spec.name}' needs '{key}' ({kind.__name__}); got {raw!r}")
        args[key] = _coerce(spec.name, key, raw[key], kind)
    for key, default in spec.optional.items():
        value = raw.get(key, default)
        typed = value is not None and default is not None
        args[key] = _coerce(spec.name, key, value, type(default)) if typed else value
    return Action(spec.name, args)


def _coerce(action: str, key: str, value: Any, kind: type) -> Any:
    try:
        return kind(value)
    except (TypeError, ValueError):
        raise ActionError(f"action '{action}': '{key}' must be a {kind.__name__}, got {value!r}") from None


def _action(
    name: str,
    doc: str,
    required: dict[str, type] | None = None,
    optional: dict[str, Any] | None = None,
    terminal: bool = False,
    passive: bool = False,
) -> Callable[[Run], Run]:
    def register(run: Run) -> Run:
        ACTIONS.register(name, ActionSpec(name, doc, run, required or {}, optional or {}, terminal, passive))
        return run

    return register


@_action(
    "mouse_click",
    "click at (x, y); button left|right|middle, click_type single|double",
    {"x": float, "y": float},
    {"button": "left", "click_type": "single"},
)
async def _mouse_click(env: WebEnv, a: dict[str, Any]) -> None:
    count = 2 if a["click_type"] == "double" else 1
    await env.page.mouse.click(a["x"], a["y"], button=a["button"], click_count=count)


@_action("hover_at", "move the mouse to (x, y)", {"x": float, "y": float})
async def _hover_at(env: WebEnv, a: dict[str, Any]) -> None:
    await env.page.mouse.move(a["x"], a["y"])


@_action(
    "mouse_drag_and_drop",
    "press at (from_x, from_y), move to (to_x, to_y), release",
    {"from_x": float, "from_y": float, "to_x": float, "to_y": float},
)
async def _drag(env: WebEnv, a: dict[str, Any]) -> None:
    mouse = env.page.mouse
    await mouse.move(a["from_x"], a["from_y"])
    await mouse.down()
    await mouse.move(a["to_x"], a["to_y"], steps=8)
    await mouse.up()


@_action("scroll", "scroll the page by (delta_x, delta_y) pixels", optional={"delta_x": 0.0, "delta_y": 0.0})
async def _scroll(env: WebEnv, a: dict[str, Any]) -> None:
    await env.page.mouse.move(env.config.width / 2, env.config.height / 2)
    await env.page.mouse.wheel(a["delta_x"], a["delta_y"])


@_action(
    "scroll_at",
    "scroll the element under (x, y) by (delta_x, delta_y) pixels",
    {"x": float, "y": float},
    {"delta_x": 0.0, "delta_y": 0.0},
)
async def _scroll_at(env: WebEnv, a: dict[str, Any]) -> None:
    await env.page.mouse.move(a["x"], a["y"])
    await env.page.mouse.wheel(a["delta_x"], a["delta_y"])


@_action("keyboard_type", "type text into the focused element", {"text": str})
async def _type(env: WebEnv, a: dict[str, Any]) -> None:
    await env.page.keyboard.type(a["text"])


@_action("keyboard_press", "press a key or chord (Enter, Tab, Control+a, ...)", {"key": str})
async def _press(env: WebEnv, a: dict[str, Any]) -> None:
    await env.page.keyboard.press(a["key"])


@_action("goto", "load a URL in the current tab", {"url": str})
async def _goto(env: WebEnv, a: dict[str, Any]) -> None:
    await env.goto(a["url"])


@_action(
    "browser_nav",
    "nav_type go_back | go_forward | new_tab (optional url) | tab_focus (tab_index) | close_tab",
    {"nav_type": str},
    {"tab_index": None, "url": None},
)
async def _browser_nav(env: WebEnv, a: dict[str, Any]) -> None:
    kind = a["nav_type"]
    if kind == "go_back":
        await env.page.go_back()
    elif kind == "go_forward":
        await env.page.go_forward()
    elif kind == "new_tab":
        await env.new_tab(a["url"])
    elif kind == "tab_focus":
        if a["tab_index"] is None:
            raise ActionError("browser_nav tab_focus needs 'tab_index'")
        env.focus_tab(int(a["tab_index"]))
    elif kind == "close_tab":
        await env.close_tab()
    else:
        raise ActionError(
            f"unknown nav_type '{kind}'. Valid nav_types: close_tab, go_back, go_forward, new_tab, tab_focus"
        )


async def _nothing(env: WebEnv, a: dict[str, Any]) -> None:
    """The effect of actions that only talk to the user or wait: none on the page."""


_action("noop", "do nothing this step (wait for the page)")(_nothing)
_action("send_msg_to_user", "answer the user and end the task", {"msg": str}, terminal=True, passive=True)(
    _nothing
)
_action(
    "report_infeasible",
    "report that the task cannot be done, with the reason, and end",
    {"reason": str},
    terminal=True,
    passive=True,
)(_nothing)
