"""The LLM judge of the tool-use benchmarks (Claw-Eval, QwenClawBench, MCP-Atlas): an Inspect model role
called at temperature 0 whose reply holds one JSON object.

Each benchmark keeps its own prompts; what they share lives here: reading the JSON verdict out of a
reply (judges wrap it in code fences or prose), and the model-backed judge that scorers call.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Protocol

from inspect_ai.model import ChatMessage, ChatMessageSystem, ChatMessageUser, GenerateConfig, Model, get_model

JUDGE_ROLE = "judge"
_OBJECT = re.compile(r"\{.*\}", re.DOTALL)


def parse_verdict(text: str | None) -> dict[str, Any]:
    """The JSON object in a judge reply (code fences and prose around it tolerated); {} if none."""
    match = _OBJECT.search(text or "")
    if not match:
        return {}
    try:
        data = json.loads(match.group(0))
    except json.JSONDecodeError:
        return {}
    return data if isinstance(data, dict) else {}


class Judge(Protocol):
    """What a scorer needs from a judge: one JSON verdict per prompt (tests pass scripted ones)."""

    async def verdict(self, prompt: str) -> dict[str, Any]: ...


@dataclass
class ModelJudge:
    """A judge backed by an Inspect model (the "judge" role), temperature 0.

    Attributes:
        model: The judge model.
        max_tokens: Reply cap (None: the model's default).
        system: System prompt, if the benchmark's judge has one.
        official: The official judge model; scores are comparable with published ones only under it.
    """

    model: Model
    max_tokens: int | None = None
    system: str | None = None
    official: str | None = None

    @classmethod
    def from_role(
        cls, *, max_tokens: int | None = None, system: str | None = None, official: str | None = None
    ) -> ModelJudge:
        return cls(get_model(role=JUDGE_ROLE), max_tokens, system, official)

    @property
    def name(self) -> str:
        return str(self.model)

    @property
    def comparable(self) -> bool:
        return self.official is not None and self.name == self.official

    async def verdict(self, prompt: str) -> dict[str, Any]:
        messages: list[ChatMessage] = [ChatMessageSystem(content=self.system)] if self.system else []
        output = await self.model.generate(
            [*messages, ChatMessageUser(content=prompt)],
            config=GenerateConfig(temperature=0.0, max_tokens=self.max_tokens),
        )
        return parse_verdict(output.completion)
