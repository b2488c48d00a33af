"""The MolmoWeb harness: the JSON-action browser loop WebVoyager (Fara-595) is run with.

With a model that sees images this is MolmoWeb's own agent run as MolmoWeb's own benchmark runner runs it,
from its pinned tree (the `molmoweb_tree` option): its `MultimodalAgent` (`agent/multimodal_agent.py`) built
with the runner's settings, read from the tree at run time (`run`'s defaults in `benchmarks/benchmarks.py`:
10 past steps as text, no past images, temperature 0.7, top_p 0.8; `SYSTEM_MESSAGE` of
`benchmarks/evaluate.py`), builds each request (one user message of its prompt template and the current
screenshot) and reads the reply (`{"thought": ..., "action": {...}}`, percent coordinates) into an
action; the request goes to the Inspect model of the run and the action to the sample's browser. As in
the runner's `Episode.run_episode` (`utils/eval_utils/episode.py`), each of the agent's actions is one
step of the cap, whatever number of browser actions carries it out (a type-at-a-point is a click, a
select-all, the text and Enter); the episode ends only on a message that starts with `[EXIT]`, at the
cap, or when the model returns nothing (upstream's prediction error). An answer, an infeasibility report
and an unreadable reply (which upstream's agent turns into `report_infeasible`) are steps like any other.

Models that cannot read images (the embedded CPU models, or `observation="text"`) get forge-eval's own
text variant instead: our system prompt listing the actions, the task, the page's visible interactive
elements with their coordinates and the start of its ARIA snapshot; it ends at the first answer or
report. That is not the official protocol; results with it are marked in the sample metadata (`prompt`).

The browser is the benchmark's: its agent passes the sample's episode (`episode`, a `BrowserEpisode` such
as the web benchmarks' `WebEnv`) and the actions it offers (`actions`) as solver options, so this module
never imports a benchmark.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import io
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

import anyio
import anyio.from_thread
import numpy as np
from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageUser,
    ContentImage,
    ContentText,
    GenerateConfig,
    get_model,
)
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.tool import Tool
from PIL import Image

from forge_eval._errors import ForgeError
from forge_eval.harnesses._facts import HarnessFacts, TaggingCues
from forge_eval.harnesses._harness import Harness
from forge_eval.models import EMBEDDED_MODELS
from forge_eval.upstream import load_module, upstream_imports

#: Text history the text variant's model sees.
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
    #: Only a message starting with `[EXIT]` ends the episode (MolmoWeb's runner), not any answer or report.
    end_on_exit: bool

    async def observe(self) -> Any: ...

    async def step(
        self,
        action: dict[str, Any],
        thought: str | None = None,
        parts: Sequence[dict[str, Any]] | None = None,
    ) -> Any:
        """Perform `parts` (default: `action`) as one step, recorded as `action`."""


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


#: MolmoWeb's agent module and the modules of its tree it imports by their package names.
AGENT_FILE = "agent/multimodal_agent.py"
_AGENT_IMPORTS = (("agent.actions", "agent/actions.py"), ("agent.utils", "agent/utils.py"))
#: Imported by the agent's constructor (its inference backends; none of them is used here).
_BACKENDS_IMPORT = ("agent.model_backends", "agent/model_backends.py")
#: MolmoWeb's benchmark runner: `run`'s defaults are the settings its agents and episodes get.
RUNNER_FILE = "benchmarks/benchmarks.py"
#: The runner's episode setup, whose `SYSTEM_MESSAGE` the agent is built with.
EVALUATE_FILE = "benchmarks/evaluate.py"
#: The runner's episode loop (step accounting and ending).
EPISODE_FILE = "utils/eval_utils/episode.py"
#: The runner's settings that reach `MultimodalAgent` (its argument names) besides the system message.
_AGENT_SETTINGS = ("max_past_steps", "max_past_images", "sampling_temperature", "sampling_top_p")
#: What a message to the user starts with to end the episode (upstream's `Episode.run_episode`).
EXIT_TAG = "[EXIT]"


def runner_settings(tree: Path) -> dict[str, Any]:
    """MolmoWeb's runner settings, read (not run: the runner imports its whole stack) from the tree:
    `run`'s literal keyword defaults and `SYSTEM_MESSAGE` as `system_message`."""
    settings: dict[str, Any] = {}
    runner = ast.parse((tree / RUNNER_FILE).read_text())
    run = next(n for n in runner.body if isinstance(n, ast.FunctionDef) and n.name == "run")
    positional = run.args.args[len(run.args.args) - len(run.args.defaults) :]
    keyword = zip(run.args.kwonlyargs, run.args.kw_defaults, strict=True)
    for arg, default in [*zip(positional, run.args.defaults, strict=True), *keyword]:
        with contextlib.suppress(ValueError, TypeError):  # no default, or not a literal: not a setting
            settings[arg.arg] = ast.literal_eval(default)  # type: ignore[arg-type]
    for node in ast.parse((tree / EVALUATE_FILE).read_text()).body:
        names = [getattr(t, "id", None) for t in node.targets] if isinstance(node, ast.Assign) else []
        if "SYSTEM_MESSAGE" in names:
            settings["system_message"] = ast.literal_eval(node.value)
    return settings


def upstream_agent(tree: Path) -> Any:
    """A fresh `MultimodalAgent` of MolmoWeb's tree built as its runner builds it (`runner_settings`); its
    model calls go to `predictor`, which the loop replaces."""
    imports = tuple((name, tree / path) for name, path in _AGENT_IMPORTS)
    module = load_module(tree / AGENT_FILE, imports, extra="web")
    settings = runner_settings(tree)
    chosen = {k: settings[k] for k in ("system_message", *_AGENT_SETTINGS)}
    with upstream_imports(((_BACKENDS_IMPORT[0], tree / _BACKENDS_IMPORT[1]),), extra="web"):
        return module.MultimodalAgent(
            endpoint_or_checkpoint="forge-eval:inspect", inference_mode="fastapi", **chosen
        )


#: How the screenshot loop counts and ends an episode (what `_upstream_loop` does), for protocol records.
EPISODE_RULES = {
    "step": "one per agent action",
    "ends": f"a message starting with {EXIT_TAG}, the step cap, or no reply",
}


def loop_settings(agent: Any, max_steps: int | None) -> dict[str, Any]:
    """What the screenshot loop runs an episode with: the agent's history settings, the cap, the rules."""
    history = {"max_past_steps": agent.max_past_steps, "max_past_images": agent.max_past_images}
    return {"max_steps": max_steps, **history, **EPISODE_RULES}


def upstream_sampling(agent: Any) -> GenerateConfig:
    """MolmoWeb's sampling (the agent's `sampling_temperature` and `sampling_top_p`)."""
    return GenerateConfig(temperature=agent.sampling_temperature, top_p=agent.sampling_top_p)


def upstream_observation(obs: Any, goal: str) -> dict[str, Any]:
    """Our observation in MolmoWeb's observation shape (what its agent reads)."""
    tabs = list(obs.tabs) or [{"url": obs.url, "title": obs.title, "active": True}]
    active = next((i for i, t in enumerate(tabs) if t.get("active")), 0)
    image = np.asarray(Image.open(io.BytesIO(obs.screenshot)).convert("RGB"))
    return {
        "goal": goal,
        "url": obs.url,
        "open_pages_urls": [t["url"] for t in tabs],
        "open_pages_titles": [t["title"] for t in tabs],
        "active_page_index": [active],
        "screenshot": image,
    }


#: MolmoWeb's action objects (pixel coordinates, from its `convert_action_json_to_action_obj`) as the
#: episode's actions: upstream class -> (our action, {our argument: upstream field}).
_ACTION_MAP: dict[str, tuple[str, dict[str, str]]] = {
    "MouseClick": ("mouse_click", {"x": "x", "y": "y", "button": "button", "click_type": "click_type"}),
    "HoverAt": ("hover_at", {"x": "x", "y": "y"}),
    "MouseDragAndDrop": (
        "mouse_drag_and_drop",
        {"from_x": "from_x", "from_y": "from_y", "to_x": "to_x", "to_y": "to_y"},
    ),
    "Scroll": ("scroll", {"delta_x": "delta_x", "delta_y": "delta_y"}),
    "ScrollAt": ("scroll_at", {"x": "x", "y": "y", "delta_x": "delta_x", "delta_y": "delta_y"}),
    "KeyboardType": ("keyboard_type", {"text": "text"}),
    "KeyboardPress": ("keyboard_press", {"key": "key"}),
    "Goto": ("goto", {"url": "url"}),
    "SendMsgToUser": ("send_msg_to_user", {"msg": "msg"}),
    "ReportInfeasible": ("report_infeasible", {"reason": "infeasibility_reason"}),
    "Noop": ("noop", {}),
}


def episode_step(action: Any) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """One of MolmoWeb's action objects as one step of the episode: the action recorded (upstream's name
    and fields when it takes several browser actions) and the browser actions that carry it out."""
    parts = episode_actions(action)
    if len(parts) == 1:
        return parts[0], parts
    return {"name": type(action).name, **action.model_dump()}, parts


def episode_actions(action: Any) -> list[dict[str, Any]]:
    """The episode actions that carry out one of MolmoWeb's action objects (type-at-a-point is a click,
    optionally select-all, the text, and optionally Enter; tab navigation uses our argument names)."""
    kind = type(action).__name__
    fields = action.model_dump()
    if kind in _ACTION_MAP:
        name, args = _ACTION_MAP[kind]
        return [{"name": name, **{ours: fields[theirs] for ours, theirs in args.items()}}]
    if kind == "BrowserNav":
        index = fields.get("index", -1)
        tab = None if index < 0 else index
        return [{"name": "browser_nav", "nav_type": fields["nav_type"], "tab_index": tab}]
    if kind == "GeminiTypeTextAt":
        steps = [{"name": "mouse_click", "x": fields["x"], "y": fields["y"]}]
        if fields.get("clear_before_typing"):
            steps.append({"name": "keyboard_press", "key": "ControlOrMeta+a"})
        steps.append({"name": "keyboard_type", "text": fields["text"]})
        if fields.get("press_enter"):
            steps.append({"name": "keyboard_press", "key": "Enter"})
        return steps
    return [{"name": "report_infeasible", "reason": f"action {kind} is not supported by this browser"}]


class _InspectPredictor:
    """The predictor MolmoWeb's agent calls (`predict(prompt, image_np, ...)` -> reply text), answered by
    the run's Inspect model from the worker thread the agent runs in: one user message, the agent's
    prompt and the current screenshot (as the PNG the browser took)."""

    def __init__(self, model: Any, config: GenerateConfig) -> None:
        self.model, self.config = model, config
        self.image_uri = ""
        self.outputs: list[Any] = []

    def predict(self, prompt: str, image_np: Any, **_: Any) -> str | None:
        message = ChatMessageUser(content=[ContentText(text=prompt), ContentImage(image=self.image_uri)])
        output = anyio.from_thread.run(functools.partial(self.model.generate, [message], config=self.config))
        self.outputs.append(output)
        return output.completion or None


async def _upstream_loop(state: TaskState, env: BrowserEpisode, tree: Path) -> None:
    """MolmoWeb's own agent drives the episode (screenshot observations) as its runner's episode does:
    one step per agent action, ended by `[EXIT]`, the cap, or an empty reply."""
    agent = upstream_agent(tree)
    predictor = _InspectPredictor(get_model(), upstream_sampling(agent))
    agent.predictor = predictor
    state.metadata["prompt"] = f"MolmoWeb's {AGENT_FILE} ({agent.system_message})"
    env.end_on_exit = True
    obs = await env.observe()
    while not env.done:
        predictor.image_uri = obs.screenshot_data_uri()
        observation = upstream_observation(obs, env.trajectory.task)
        reply, chosen = await anyio.to_thread.run_sync(agent.predict_action, observation)
        output = predictor.outputs[-1]
        state.messages.append(ChatMessageAssistant(content=reply or "", model=output.model))
        if reply is None:  # upstream's runner: a prediction error ends the episode
            state.metadata["ended"] = "the model returned no reply (MolmoWeb's ACTION_PREDICTION_ERROR)"
            break
        recorded, parts = episode_step(chosen["action_output"].action)
        obs = await env.step(recorded, thought=chosen["thought"] or None, parts=parts)


async def _text_loop(state: TaskState, env: BrowserEpisode, prompt: str) -> None:
    """forge-eval's text variant for models that cannot see images (not MolmoWeb's protocol)."""
    model = get_model()
    state.metadata["prompt"] = "forge-eval's text variant (not comparable)"
    obs = await env.observe()
    task = env.trajectory.task
    failures = 0
    while not env.done:
        header = f"Task: {task}\nURL: {obs.url}\nTitle: {obs.title}\nTabs: {len(obs.tabs)}\n"
        header += f"Previous steps:\n{_history(env)}\n"
        content: list[Any] = [
            ContentText(text=header),
            ContentText(text=obs.page_text((env.config.width, env.config.height))),
        ]
        messages: list[ChatMessage] = [ChatMessageSystem(content=prompt), ChatMessageUser(content=content)]
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


@solver
def molmoweb_agent(
    episode: BrowserEpisode | None = None,
    actions: Sequence[ActionDoc] = (),
    observation: str = "auto",
    molmoweb_tree: Path | str | None = None,
) -> Solver:
    """Run the MolmoWeb loop on the sample's browser episode until it ends.

    Args:
        episode: The sample's browser episode (a web benchmark's agent passes it).
        actions: The actions the episode takes (listed in the text variant's system prompt).
        observation: "screenshot" (the protocol: MolmoWeb's own agent), "text" (our variant: element
            list + ARIA for text-only models) or "auto" (text for the embedded models, else screenshot).
        molmoweb_tree: MolmoWeb's pinned tree (allenai/molmoweb), whose agent the screenshot loop runs.
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
        text = uses_text(observation, str(get_model()))
        env.elements = text
        state.metadata["observation"] = "text" if text else "screenshot"
        if text:
            await _text_loop(state, env, prompt)
        elif molmoweb_tree is None:
            raise ForgeError(
                "the molmoweb harness needs MolmoWeb's tree for a model that sees screenshots",
                hint="the web benchmarks pass it (-T upstream_dir=DIR, else the cache or a download)",
            )
        else:
            await _upstream_loop(state, env, Path(molmoweb_tree))
        state.output.completion = env.trajectory.final_response
        return state

    return solve


def uses_text(observation: str, model_name: str) -> bool:
    """Whether the loop runs the text variant: asked for, or "auto" with a model that cannot see images."""
    return observation == "text" or (observation == "auto" and is_text_only(model_name))


class MolmoWebHarness(Harness):
    name = "molmoweb"
    description = "MolmoWeb's JSON-action browser loop (screenshot + text history; percent coordinates)"
    facts = FACTS

    def agent(self, *, tools: list[Tool], system_prompt: str, **options: Any) -> Solver:
        """The loop drives the sample's browser (`episode` and `actions` options) directly; `tools` and
        `system_prompt` are not used. The browser's requirements are the benchmark's."""
        return molmoweb_agent(**options)
