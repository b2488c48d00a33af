"""Scripted stand-ins for the agent and the judge models (no vision model can run here).

The agent reads the text observation (element list with percent coordinates) and acts like a careful
user would; the judge answers each judge prompt by its stage, with a verdict from a simple rule, and
records what it was shown (images, text) so that tests can check the judges' inputs.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from inspect_ai.model import ChatMessage, ContentImage, GenerateConfig, ModelOutput, ModelUsage
from inspect_ai.tool import ToolChoice, ToolInfo

USAGE = ModelUsage(input_tokens=10, output_tokens=5, total_tokens=15)


def reply(content: str) -> ModelOutput:
    out = ModelOutput.from_content(model="mockllm", content=content)
    out.usage = USAGE  # mockllm would count tokens with tiktoken, which downloads a file
    return out


def _text(messages: list[ChatMessage]) -> str:
    return "\n".join(m.text for m in messages)


def element(prompt: str, name: str) -> tuple[float, float]:
    """Percent coordinates of the element called `name` in a text observation."""
    match = re.search(rf'"{re.escape(name)}" at x=([\d.]+), y=([\d.]+)', prompt)
    assert match, f"no element {name!r} in the observation"
    return float(match.group(1)), float(match.group(2))


def action(thought: str, **act: Any) -> ModelOutput:
    return reply(json.dumps({"thought": thought, "action": act}))


class ScriptedAgent:
    """Plays `plan(prompt, step)` -> action per call, one plan per task text."""

    def __init__(self, plans: dict[str, Callable[[str, int], ModelOutput]]) -> None:
        self.plans = plans
        self.steps: dict[str, int] = {}

    def __call__(
        self, input: list[ChatMessage], tools: list[ToolInfo], tool_choice: ToolChoice, config: GenerateConfig
    ) -> ModelOutput:
        prompt = _text(input)
        key = next(k for k in self.plans if k in prompt)
        step = self.steps.get(key, 0)
        self.steps[key] = step + 1
        return self.plans[key](prompt, step)


class ScriptedJudge:
    """Answers the official judges' prompts (WebVoyager's auto_eval and WebJudge's three stages) with one
    reply that each stage's upstream parser reads: key points, a 1-5 score, a status and a verdict.
    Success iff the prompt matches `success_if` (default: always); records what it was shown."""

    def __init__(self, success_if: str = "") -> None:
        self.calls: list[dict[str, Any]] = []
        self.success_if = success_if

    def __call__(
        self, input: list[ChatMessage], tools: list[ToolInfo], tool_choice: ToolChoice, config: GenerateConfig
    ) -> ModelOutput:
        prompt = _text(input)
        images = sum(
            isinstance(c, ContentImage) for m in input if not isinstance(m.content, str) for c in m.content
        )
        self.calls.append(
            {"prompt": prompt, "images": images, "temperature": config.temperature, "config": config}
        )
        success = bool(re.search(self.success_if, prompt))
        return reply(
            "**Key Points**:\n1. Find the requested fact.\n2. Report it.\n\n"
            "**Reasoning**: the page shows it.\n**Score**: 4\n"
            + (
                "Thoughts: all key points met.\nStatus: success\nVerdict: SUCCESS"
                if success
                else "Thoughts: not met.\nStatus: failure\nVerdict: NOT SUCCESS"
            )
        )
