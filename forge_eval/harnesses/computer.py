"""The computer-use harness: OSWorld's agent loop (observe the desktop, answer with actions, repeat).

Each step the model gets the task, its last few observations (screenshot, accessibility tree or both)
and answers in the task's action space: Python `pyautogui` code in a ```python block, or computer_13
actions as JSON objects ({"action_type": "CLICK", "x": .., "y": ..}); WAIT, DONE and FAIL are special
answers on their own line (FAIL = "this task cannot be done", which infeasible tasks expect). The step
cap (`max_steps`: OSWorld reports 15, 50 and 100) ends the episode otherwise.

The desktop comes from the benchmark through `bind_computer()`, so the loop is the same for any
provider. A benchmark may also pass its own agent's prompting (`policy`, a `Policy`: OSWorld passes its
upstream baseline agent); the loop's own prompt below is then not used. Models that cannot read
images (the embedded CPU models) get the accessibility tree instead of the screenshot ("auto");
results with a changed observation type are marked in the sample metadata.
"""

from __future__ import annotations

import base64
import json
import re
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Protocol

from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageUser,
    ContentImage,
    ContentText,
    ModelOutput,
    get_model,
)
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.tool import Tool

from forge_eval.harnesses._facts import HarnessFacts, TaggingCues
from forge_eval.harnesses._harness import Harness
from forge_eval.harnesses.molmoweb import is_text_only

SPECIAL_ACTIONS = ("WAIT", "DONE", "FAIL")
#: Observations kept in the prompt (OSWorld's Kimi agent keeps the last 3 screenshots).
HISTORY = 3
#: Characters of the accessibility tree shown per observation (every token costs time on CPU models).
A11Y_CHARS = 6000

FACTS = HarnessFacts(name="computer", tagging=TaggingCues(aux_without_tools=False))


@dataclass(frozen=True)
class Observation:
    screenshot: bytes | None = None
    a11y_tree: str | None = None


class Computer(Protocol):
    """A desktop episode as the loop sees it."""

    action_space: str
    observation_type: str
    screen_size: tuple[int, int]

    async def observe(self) -> Observation: ...

    async def act(self, action: str | dict[str, Any]) -> bool | None:
        """Carry out `action`; True when it ended the episode (DONE or FAIL)."""
        ...


@dataclass
class Decision:
    """One step of a `Policy`: what the model was sent, its reply, and the actions read from it.

    Attributes:
        messages: The conversation the model was sent this step, its reply appended.
        output: The model's reply.
        actions: The actions, in order; None when the reply held none the policy could read.
    """

    messages: list[ChatMessage]
    output: ModelOutput
    actions: list[str | dict[str, Any]] | None


class Policy(Protocol):
    """A benchmark's own agent: builds each step's prompt from the observation, asks the model, reads
    the actions from the reply (OSWorld's baseline agent from its upstream tree)."""

    async def decide(self, instruction: str, observation: Observation) -> Decision: ...


_COMPUTER: ContextVar[Computer | None] = ContextVar("forge_computer", default=None)


def bind_computer(computer: Computer | None) -> None:
    """Make `computer` the desktop of the running sample."""
    _COMPUTER.set(computer)


def current_computer() -> Computer:
    computer = _COMPUTER.get()
    if computer is None:
        raise RuntimeError(
            "no desktop is bound to this sample; the benchmark's setup must call bind_computer()"
        )
    return computer


_PYAUTOGUI_RULES = """\
Answer with Python code in one ```python block that uses pyautogui (already imported) to act, e.g.
```python
pyautogui.click(960, 540); pyautogui.write('hello'); pyautogui.hotkey('ctrl', 's')
```
The code runs on the computer as the user, so you may also use the Python standard library there."""

_COMPUTER13_RULES = """\
Answer with one or more JSON objects in one ```json block (a list for several), each an action:
MOVE_TO/CLICK/MOUSE_DOWN/MOUSE_UP/RIGHT_CLICK/DOUBLE_CLICK (x, y; CLICK also button, num_clicks),
DRAG_TO (x, y), SCROLL (dx, dy), TYPING (text), PRESS/KEY_DOWN/KEY_UP (key), HOTKEY (keys: list), e.g.
```json
{"action_type": "CLICK", "x": 960, "y": 540}
```"""


def system_prompt(action_space: str, width: int, height: int) -> str:
    rules = _PYAUTOGUI_RULES if action_space == "pyautogui" else _COMPUTER13_RULES
    return (
        f"You operate an Ubuntu-like computer (screen {width}x{height} pixels, user 'user', password "
        f"'password') to complete the user's task. Each turn you see the current state of the screen.\n"
        f"{rules}\n"
        "Instead of actions you may answer one word on its own line: WAIT (let the computer catch up), "
        "DONE (the task is complete) or FAIL (the task cannot be done on this computer)."
    )


def is_final(action: str | dict[str, Any]) -> bool:
    """Whether `action` ends the episode: DONE or FAIL, as a word or as computer_13's JSON action."""
    kind = action.get("action_type") if isinstance(action, dict) else action
    return kind in ("DONE", "FAIL")


def parse_actions(text: str, action_space: str) -> list[str | dict[str, Any]]:
    """The actions of a reply, in order; [] when it holds none."""
    blocks = re.findall(r"```(?:python|py|json)?\s*\n(.*?)```", text, flags=re.S)
    actions: list[str | dict[str, Any]] = []
    for block in blocks:
        block = block.strip()
        if block in SPECIAL_ACTIONS or action_space == "pyautogui":
            actions.append(block)
        else:
            try:
                value = json.loads(block)
            except json.JSONDecodeError:
                continue
            actions += [v for v in (value if isinstance(value, list) else [value]) if isinstance(v, dict)]
    if not actions:
        words = re.findall(r"^\s*(WAIT|DONE|FAIL)\s*$", text, flags=re.M)
        actions += words[-1:]
    return actions


def _observation_content(obs: Observation, step: int) -> list[Any]:
    content: list[Any] = [ContentText(text=f"Step {step}: the computer now shows:")]
    if obs.screenshot is not None:
        content.append(
            ContentImage(image="data:image/png;base64," + base64.b64encode(obs.screenshot).decode())
        )
    if obs.a11y_tree is not None:
        content.append(ContentText(text="Accessibility tree:\n" + obs.a11y_tree[:A11Y_CHARS]))
    return content


@solver
def computer_agent(max_steps: int = 15, policy: Policy | None = None) -> Solver:
    """Run the observe-act loop on the sample's computer until DONE/FAIL or `max_steps` steps.

    Args:
        max_steps: Model replies before the episode ends.
        policy: The benchmark's own agent (prompt and reply parsing); None = this loop's own prompt.
    """

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        computer = current_computer()
        if policy is not None:
            return await _run_policy(state, computer, policy, max_steps)
        width, height = computer.screen_size
        state.messages = [
            ChatMessageSystem(content=system_prompt(computer.action_space, width, height)),
            ChatMessageUser(content=f"Task: {state.input_text}"),
        ]
        model = get_model()
        unparseable = 0
        actions_taken: list[str] = []
        for step in range(1, max_steps + 1):
            obs = await computer.observe()
            state.messages.append(ChatMessageUser(content=_observation_content(obs, step)))
            _drop_old_observations(state)
            output = await model.generate(state.messages)
            state.messages.append(ChatMessageAssistant(content=output.completion, model=output.model))
            state.output = output
            actions = parse_actions(output.completion, computer.action_space)
            if not actions:
                unparseable += 1
                state.messages.append(
                    ChatMessageUser(content="No action found in your answer; follow the format.")
                )
            if await _act_all(computer, actions, actions_taken):
                break
        state.metadata.update(
            observation=computer.observation_type, steps=len(actions_taken), unparseable_replies=unparseable
        )
        return state

    return solve


async def _act_all(computer: Computer, actions: list[str | dict[str, Any]], taken: list[str]) -> bool:
    """Carry out `actions` in order until one ends the episode; whether one did."""
    for action in actions:
        ended = await computer.act(action)
        taken.append(action if isinstance(action, str) else json.dumps(action))
        if ended or is_final(action):
            return True
    return False


async def _run_policy(state: TaskState, computer: Computer, policy: Policy, max_steps: int) -> TaskState:
    """The loop with the benchmark's agent: each step one observation, one reply, its actions."""
    unparseable = 0
    taken: list[str] = []
    for _ in range(max_steps):
        decision = await policy.decide(state.input_text, await computer.observe())
        state.messages = decision.messages
        state.output = decision.output
        if not decision.actions:
            unparseable += 1
        if await _act_all(computer, decision.actions or [], taken):
            break
    state.metadata.update(
        observation=computer.observation_type, steps=len(taken), unparseable_replies=unparseable
    )
    return state


def _drop_old_observations(state: TaskState) -> None:
    """Keep only the last HISTORY observations' images and trees (the replies stay)."""
    seen = 0
    for message in reversed(state.messages):
        if isinstance(message, ChatMessageUser) and isinstance(message.content, list):
            seen += 1
            if seen > HISTORY:
                message.content = [c for c in message.content if isinstance(c, ContentText)][:1]


class ComputerHarness(Harness):
    name = "computer"
    description = (
        "OSWorld-style computer-use loop: screenshot/a11y observations, pyautogui or computer_13 actions"
    )
    facts = FACTS

    def agent(self, *, tools: list[Tool], system_prompt: str, **options: Any) -> Solver:
        """The loop drives the sample's computer directly; `tools` and `system_prompt` are not used."""
        return computer_agent(**options)


def observation_for(model_name: str, requested: str) -> str:
    """The observation type for `requested` ("auto": a11y tree for text-only models, else screenshot)."""
    if requested != "auto":
        return requested
    return "a11y_tree" if is_text_only(model_name) else "screenshot"
