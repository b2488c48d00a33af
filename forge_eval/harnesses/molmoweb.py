"""The MolmoWeb harness: the JSON-action browser loop WebVoyager (Fara-595) is run with.

Each step the model sees the task, the page's URL and title, its last `max_past_steps` thoughts and
actions as text, and the current screenshot only; it answers with one JSON object
`{"thought": ..., "action": {"name": ..., ...}}` whose coordinates are percentages of the 1280x720
viewport. `send_msg_to_user` ends the episode with the answer, `report_infeasible` ends it as
impossible, and the episode's step cap (`max_steps`, a run option) ends it otherwise.

Models that cannot read images (the embedded CPU models, or `observation="text"`) get the page as text
instead: the visible interactive elements with their coordinates and the start of the ARIA snapshot.
That is not the official protocol; results with it are marked in the sample metadata.

The browser is the benchmark's: its agent passes the sample's episode (`episode`, a `BrowserEpisode` such
as the web benchmarks' `WebEnv`) and the actions it offers (`actions`) as solver options, so this module
never imports a benchmark.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol

from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageUser,
    ContentImage,
    ContentText,
    get_model,
)
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.tool import Tool

from forge_eval._errors import ForgeError
from forge_eval.harnesses._facts import HarnessFacts, TaggingCues
from forge_eval.harnesses._harness import Harness
from forge_eval.models import EMBEDDED_MODELS

#: Text history the model sees (MolmoWeb's CLI default).
MAX_PAST_STEPS = 10
#: Characters of a past step's error the history repeats (the first sentence says what went wrong).
HISTORY_ERROR_CHARS = 120
_XY_KEYS = (("x", "y"), ("from_x", "from_y"), ("to_x", "to_y"))

FACTS = HarnessFacts(name="molmoweb", tagging=TaggingCues(aux_without_tools=False))



class ActionDoc(Protocol):
    """How an action is described to the model: its name, arguments and effect."""

    name: str
    doc: str
    required: Mapping[str, Any]
    optional: Mapping[str, Any]


class BrowserEpisode(Protocol):
    """The sample's browser episode as the loop uses it (the web benchmarks' `WebEnv`)."""

    trajectory: Any
    config: Any
    done: bool
    elements: bool

    async def observe(self) -> Any: ...

    async def step(self, action: dict[str, Any], thought: str | None = None) -> Any: ...


def system_prompt(actions: Iterable[ActionDoc]) -> str:
    """The loop's system prompt, listing `actions`."""
    lines = "\n".join(
        f"- {a.name} {{{', '.join([*a.required, *(k + '?' for k in a.optional)])}}}: {a.doc}" for a in actions
    )
    return f"""\
You are a web browsing agent. You control a browser window of 1280x720 pixels to complete the user's task.
Every turn you get the task, the current page and your previous steps. Reply with exactly one JSON object:
{{"thought": "<what you see and what you do next>", "action": {{"name": "<action>", ...arguments}}}}
Coordinates x and y are percentages of the window width and height (0-100, from the top-left corner).
Actions:
{lines}
To type into a field, click it first. When the task is done, or you found the answer, use send_msg_to_user
with msg "[ANSWER] <your answer>". If the task cannot be done, use report_infeasible."""


def parse_reply(text: str) -> tuple[str | None, dict[str, Any]]:
    """The thought and the action of a reply (the last JSON object in it); raises ValueError if none."""
    for match in reversed(list(re.finditer(r"\{", text))):
        try:
            reply, _ = json.JSONDecoder().raw_decode(text[match.start() :])
        except json.JSONDecodeError:
            continue
        if isinstance(reply, dict) and isinstance(reply.get("action"), dict):
            return (str(reply["thought"]) if reply.get("thought") else None), dict(reply["action"])
        if isinstance(reply, dict) and "name" in reply:
            return None, reply
    raise ValueError("no JSON object with an 'action' in the reply")


def to_pixels(action: dict[str, Any], width: int, height: int) -> dict[str, Any]:
    """Convert the action's percent coordinates into viewport pixels."""
    out = dict(action)
    for kx, ky in _XY_KEYS:
        for key, size in ((kx, width), (ky, height)):
            # A non-number is left as given: the environment reports the bad argument.
            if key in out:
                with contextlib.suppress(TypeError, ValueError):
                    out[key] = float(out[key]) * size / 100
    return out


def _history(env: BrowserEpisode) -> str:
    lines = []
    steps = env.trajectory.steps
    for i, s in enumerate(steps[-MAX_PAST_STEPS:], start=max(0, len(steps) - MAX_PAST_STEPS) + 1):
        note = f" (error: {s.error[:HISTORY_ERROR_CHARS]})" if s.error else ""
        lines.append(f"{i}. thought: {s.thought or '-'} | action: {json.dumps(s.action)}{note}")
    return "\n".join(lines) or "(none yet)"


def is_text_only(model_name: str) -> bool:
    """Whether a model cannot take images: the embedded CPU models are text-only."""
    return model_name.split("/")[-1] in EMBEDDED_MODELS.names()


@solver
def molmoweb_agent(
    episode: BrowserEpisode | None = None, actions: Sequence[ActionDoc] = (), observation: str = "auto"
) -> Solver:
    """Run the MolmoWeb loop on the sample's browser episode until it ends.

    Args:
        episode: The sample's browser episode (a web benchmark's agent passes it).
        actions: The actions the episode takes (listed in the system prompt).
        observation: "screenshot" (the protocol), "text" (element list + ARIA for text-only models) or
            "auto" (text for the embedded models, else screenshot).
    """
    if observation not in ("auto", "screenshot", "text"):
        raise ValueError(f"observation must be auto, screenshot or text, got {observation!r}")
    prompt = system_prompt(actions)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        if episode is None:
            raise ForgeError(
                "the molmoweb harness got no browser episode",
                hint="it runs only inside a web benchmark's task (weblab, webvoyager, online_mind2web)",
            )
        env = episode
        model = get_model()
        text = observation == "text" or (observation == "auto" and is_text_only(str(model)))
        env.elements = text
        state.metadata["observation"] = "text" if text else "screenshot"
        obs = await env.observe()
        task = env.trajectory.task
        failures = 0
        while not env.done:
            header = f"Task: {task}\nURL: {obs.url}\nTitle: {obs.title}\nTabs: {len(obs.tabs)}\n"
            header += f"Previous steps:\n{_history(env)}\n"
            content: list[Any] = [ContentText(text=header)]
            if text:
                content.append(ContentText(text=obs.page_text((env.config.width, env.config.height))))
            else:
                content.append(ContentImage(image=obs.screenshot_data_uri()))
            messages: list[ChatMessage] = [
                ChatMessageSystem(content=prompt),
                ChatMessageUser(content=content),
            ]
            output = await model.generate(messages)
            reply = output.completion
            state.messages.append(ChatMessageAssistant(content=reply, model=output.model))
            try:
                thought, action = parse_reply(reply)
            except ValueError as e:
                failures += 1
                action, thought = {"name": "noop"}, f"(unparseable reply: {e})"
            obs = await env.step(to_pixels(action, env.config.width, env.config.height), thought=thought)
        state.metadata["unparseable_replies"] = failures
        state.output.completion = env.trajectory.final_response
        return state

    return solve


class MolmoWebHarness(Harness):
    name = "molmoweb"
    description = "MolmoWeb's JSON-action browser loop (screenshot + text history; percent coordinates)"
    facts = FACTS

    def agent(self, *, tools: list[Tool], system_prompt: str, **options: Any) -> Solver:
        """The loop drives the sample's browser (`episode` and `actions` options) directly; `tools` and
        `system_prompt` are not used. The browser's requirements are the benchmark's."""
        return molmoweb_agent(**options)
