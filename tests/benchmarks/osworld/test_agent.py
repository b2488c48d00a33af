"""OSWorld's baseline agent from the tree as the computer harness's policy (no desktop needed)."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path
from typing import Any

from inspect_ai.model import ChatMessageAssistant, ChatMessageSystem, ModelOutput, ModelUsage, get_model
from PIL import Image

from forge_eval.harnesses.computer import Observation, is_final


def _model(replies: list[str]) -> Any:
    outputs = [ModelOutput.from_content("mockllm/model", r) for r in replies]
    for output in outputs:  # without usage, mockllm counts tokens with tiktoken, which downloads a file
        output.usage = ModelUsage(input_tokens=10, output_tokens=5, total_tokens=15)
    return get_model("mockllm/model", custom_outputs=outputs)


def _screenshot(colour: str) -> Observation:
    buffer = io.BytesIO()
    Image.new("RGB", (64, 36), colour).save(buffer, format="PNG")
    return Observation(screenshot=buffer.getvalue())


def test_computer13_steps_with_the_trees_prompt_history_and_parser(osworld_root: Path) -> None:
    from forge_eval.benchmarks.osworld._agent import UpstreamPolicy, agent_module

    replies = [
        '```json\n{"action_type": "CLICK", "x": 5, "y": 6}\n```',
        '```json\n{"action_type": "FAIL"}\n```',
    ]
    policy = UpstreamPolicy(osworld_root, "screenshot", "computer_13", {}, model=_model(replies))

    async def two_steps() -> list[Any]:
        return [await policy.decide("Open the menu.", _screenshot(c)) for c in ("red", "blue")]

    first, second = asyncio.run(two_steps())
    prompts = agent_module(osworld_root)
    system = first.messages[0]
    assert isinstance(system, ChatMessageSystem)
    # the computer_13 prompt as prompts.py has it (upstream's own constructor fails formatting it)
    assert system.text.startswith(prompts.SYS_PROMPT_IN_SCREENSHOT_OUT_ACTION)
    assert system.text.endswith("Open the menu.")
    assert first.actions == [{"action_type": "CLICK", "x": 5, "y": 6}] and not is_final(first.actions[0])
    # step 2 carries step 1's observation and reply (upstream's trajectory), then the new screenshot
    assert [m.role for m in second.messages] == ["system", "user", "assistant", "user", "assistant"]
    assert second.messages[2].text == replies[0]
    assert isinstance(second.messages[-1], ChatMessageAssistant)
    assert second.actions == [{"action_type": "FAIL"}] and is_final(second.actions[0])
    assert len(policy.agent.observations) == len(policy.agent.actions) == len(policy.agent.thoughts) == 2


def test_pyautogui_reply_without_code_has_no_action(osworld_root: Path) -> None:
    from forge_eval.benchmarks.osworld._agent import UpstreamPolicy

    policy = UpstreamPolicy(osworld_root, "screenshot", "pyautogui", {}, model=_model(["I am done.", "DONE"]))

    async def two_steps() -> list[Any]:
        return [await policy.decide("Do it.", _screenshot("white")) for _ in range(2)]

    prose, done = asyncio.run(two_steps())
    assert prose.actions == []  # upstream's code parser wants a code block or the bare word
    assert done.actions == ["DONE"]
