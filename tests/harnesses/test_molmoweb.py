"""The molmoweb harness sends MolmoWeb's own request: its agent's prompt template and sampling, from the
pinned tree, for the same observation; its actions reach the browser episode in pixels."""

from __future__ import annotations

import base64
import inspect
import io
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import Sample
from inspect_ai.model import (
    ChatMessage,
    ChatMessageUser,
    ContentImage,
    ContentText,
    GenerateConfig,
    ModelOutput,
    ModelUsage,
    get_model,
)
from PIL import Image

from forge_eval.harnesses.molmoweb import (
    AGENT_FILE,
    episode_actions,
    episode_step,
    molmoweb_agent,
    upstream_observation,
)
from forge_eval.upstream import load_module

TREE_NAME = "allenai+molmoweb@6a841b4"


def png() -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (1280, 720), (200, 210, 220)).save(buffer, format="PNG")
    return buffer.getvalue()


@dataclass
class Obs:
    url: str
    title: str
    tabs: list[dict[str, Any]]
    screenshot: bytes

    def screenshot_data_uri(self) -> str:
        return "data:image/png;base64," + base64.b64encode(self.screenshot).decode()


@dataclass
class FakeEpisode:
    """A browser episode without a browser: two tabs, records the actions it is given."""

    task: str
    config: Any = field(default_factory=lambda: type("C", (), {"width": 1280, "height": 720})())
    done: bool = False
    elements: bool = False
    end_on_exit: bool = False
    actions: list[dict[str, Any]] = field(default_factory=list)
    shot: bytes = field(default_factory=png)

    @property
    def trajectory(self) -> Any:
        return type("T", (), {"task": self.task, "final_response": "done", "steps": []})()

    def _obs(self) -> Obs:
        tabs = [
            {"index": 0, "url": "https://a.test/", "title": "Home", "active": False},
            {"index": 1, "url": "https://shop.test/kettles", "title": "Kettles | Shop", "active": True},
        ]
        return Obs("https://shop.test/kettles", "Kettles | Shop", tabs, self.shot)

    async def observe(self) -> Obs:
        return self._obs()

    async def step(
        self, action: dict[str, Any], thought: str | None = None, parts: list[dict[str, Any]] | None = None
    ) -> Obs:
        self.actions.extend(parts or [action])
        if self.end_on_exit:
            self.done = action["name"] == "send_msg_to_user" and action["msg"].startswith("[EXIT]")
        else:
            self.done = action["name"] in ("send_msg_to_user", "report_infeasible")
        return self._obs()


def upstream_prompt(tree: Path, obs: Obs, goal: str) -> tuple[str, Any]:
    """MolmoWeb's own agent (its module, its defaults) asked for the same observation: its prompt, the
    sampling it would ask for."""
    module = load_module(
        tree / AGENT_FILE,
        (("agent.actions", tree / "agent/actions.py"), ("agent.utils", tree / "agent/utils.py")),
        extra="web",
    )
    agent = module.MultimodalAgent.__new__(module.MultimodalAgent)
    defaults = {
        name: p.default for name, p in inspect.signature(module.MultimodalAgent.__init__).parameters.items()
    }
    agent.system_message = defaults["system_message"]
    agent.max_past_steps = defaults["max_past_steps"]
    agent.past_actions = []
    prompt = f"{agent.system_message}: {agent.get_user_message(upstream_observation(obs, goal))}"
    return prompt, (defaults["sampling_temperature"], defaults["sampling_top_p"])


def test_first_request_is_molmowebs_template_and_sampling(tmp_path: Path, upstream_trees: Path) -> None:
    tree = upstream_trees / TREE_NAME
    goal = "On https://shop.test/: find the cheapest kettle"
    episode = FakeEpisode(task=goal)
    seen: list[tuple[list[ChatMessage], GenerateConfig]] = []

    def model(input: list[ChatMessage], tools: Any, tool_choice: Any, config: GenerateConfig) -> ModelOutput:
        seen.append((input, config))
        action = [
            {"name": "click", "x": 50, "y": 25},
            {"name": "send_msg_to_user", "msg": "[ANSWER] $19"},
            {"name": "send_msg_to_user", "msg": "[EXIT]"},
        ][len(seen) - 1]
        out = ModelOutput.from_content(
            model="mockllm", content=json.dumps({"thought": "t", "action": action})
        )
        out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return out

    task = Task(
        dataset=[Sample(input=goal)],
        solver=molmoweb_agent(episode=episode, observation="screenshot", molmoweb_tree=tree),
    )
    (log,) = inspect_eval(
        task, model=get_model("mockllm/vision", custom_outputs=model), log_dir=str(tmp_path), display="none"
    )
    assert log.status == "success", log.error
    first, config = seen[0]
    expected_prompt, (temperature, top_p) = upstream_prompt(tree, episode._obs(), goal)
    assert len(first) == 1 and isinstance(first[0], ChatMessageUser)
    text, image = first[0].content  # type: ignore[misc]
    assert isinstance(text, ContentText) and text.text == expected_prompt
    assert text.text.startswith("molmo_web_think: ") and "Page 1: Kettles | Shop" in text.text
    assert isinstance(image, ContentImage) and image.image == episode._obs().screenshot_data_uri()
    assert (config.temperature, config.top_p) == (temperature, top_p) == (0.7, 0.8)
    # the second request carries the first step in MolmoWeb's history form
    assert "## Step 1" in seen[1][0][0].text
    # percent coordinates of the viewport became pixels (upstream's clamped conversion)
    assert episode.actions[0] == {
        "name": "mouse_click",
        "x": 640.0,
        "y": 180.0,
        "button": "left",
        "click_type": "single",
    }
    assert episode.actions[1] == {"name": "send_msg_to_user", "msg": "[ANSWER] $19"}
    assert log.samples and log.samples[0].metadata["prompt"].startswith(
        "MolmoWeb's agent/multimodal_agent.py"
    )


def test_type_at_a_point_becomes_click_select_type_enter(upstream_trees: Path) -> None:
    tree = upstream_trees / TREE_NAME
    actions = load_module(tree / "agent/actions.py", extra="web")
    steps = episode_actions(actions.GeminiTypeTextAt(x=10, y=20, text="kettle"))
    assert [s["name"] for s in steps] == ["mouse_click", "keyboard_press", "keyboard_type", "keyboard_press"]
    recorded, parts = episode_step(actions.GeminiTypeTextAt(x=10, y=20, text="kettle"))
    assert parts == steps and recorded["name"] == "gemini_type_text_at" and recorded["text"] == "kettle"
    assert episode_actions(actions.ReportInfeasible(infeasibility_reason="blocked")) == [
        {"name": "report_infeasible", "reason": "blocked"}
    ]
