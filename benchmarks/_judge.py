"""The LLM judges of the benchmarks: one home for the judge's model role, its settings and its prompts.

A benchmark scored by a judge declares a `JudgeSetup` (`Benchmark.judge`): the prompt templates it
sends, its generate settings and where the prompts come from. From it come the judge block of
results.json (`info()`: `prompt_sha256` by one recipe, the settings), the protocol record's judge
elements (`elements()`), and the model the scorers call (`model()`, or `ModelJudge` for judges whose
reply is one JSON object). `forge-eval run --judge MODEL` binds the model role (`JUDGE_ROLE`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from inspect_ai.model import ChatMessage, ChatMessageSystem, ChatMessageUser, GenerateConfig, Model, get_model

from forge_eval.rundir import NotRecorded, Ours, ProtocolElement, Source, Value, element, sha256_text

#: The Inspect model role judges are called through (`forge-eval run --judge MODEL` binds it).
JUDGE_ROLE = "judge"
_OBJECT = re.compile(r"\{.*\}", re.DOTALL)


def prompt_sha256(*templates: str) -> str:
    """What identifies a judge's prompts (results.json `judge.prompt_sha256` and the protocol record):
    the sha256 of the templates in order, each followed by a NUL byte."""
    return sha256_text("".join(f"{t}\0" for t in templates))


@dataclass(frozen=True)
class JudgeSetup:
    """A benchmark's LLM judge as this forge-eval calls it.

    Attributes:
        prompts: The templates the judge is sent (system and user prompts), in a fixed order.
        origin: Whose prompts they are, in words (e.g. "ours: a rewrite of WebVoyager's auto_eval
            prompt"); shown in the protocol record.
        max_tokens: Reply cap (None: the model's default).
        temperature: Sampling temperature (judges sample greedily so a verdict repeats).
        settings: Anything else that shapes a verdict, in words (calls per trial, a gate).
        official_prompts: The official side of the judge-prompt element; `NotRecorded` until the
            benchmark reads upstream's prompts from the pinned tree.
    """

    prompts: tuple[str, ...]
    origin: str
    max_tokens: int | None = None
    temperature: float = 0.0
    settings: Mapping[str, Any] = field(default_factory=dict)
    official_prompts: Source = NotRecorded(why="upstream's judge prompt is not read from its tree yet")

    @property
    def prompt_sha256(self) -> str:
        return prompt_sha256(*self.prompts)

    def config(self, max_tokens: int | None = None) -> GenerateConfig:
        """The judge's generate settings (`max_tokens` overrides the declared cap)."""
        return GenerateConfig(temperature=self.temperature, max_tokens=max_tokens or self.max_tokens)

    def model(self, max_tokens: int | None = None) -> Model:
        """The model bound to the judge role, with these settings."""
        return get_model(role=JUDGE_ROLE, config=self.config(max_tokens))

    def info(self) -> dict[str, Any]:
        """The judge block of results.json (besides the model and the role): prompt hash and settings."""
        settings = {**self.config().model_dump(exclude_none=True), **self.settings}
        return {"prompt_sha256": self.prompt_sha256, "settings": settings, "prompts": self.origin}

    def elements(self, official_model: str | None, run_model: str | None) -> list[ProtocolElement]:
        """The protocol record's judge elements: the model (official vs the run's) and the prompts."""
        ours = Ours(what=self.origin, sha256=self.prompt_sha256)
        return [
            element(
                "judge_model",
                Value(value=official_model, label=official_model or "none declared"),
                Value(value=run_model),
            ),
            element("judge_prompt", self.official_prompts, ours),
        ]


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
    """A judge backed by the model bound to the judge role, whose replies hold one JSON object.

    Attributes:
        model: The judge model.
        config: The setup's generate settings, sent with every call (they win over the role's own).
        system: System prompt, if the benchmark's judge has one.
        official: The official judge model; scores are comparable with published ones only under it.
    """

    model: Model
    config: GenerateConfig = field(default_factory=GenerateConfig)
    system: str | None = None
    official: str | None = None

    @classmethod
    def from_role(
        cls,
        setup: JudgeSetup,
        *,
        max_tokens: int | None = None,
        system: str | None = None,
        official: str | None = None,
    ) -> ModelJudge:
        return cls(get_model(role=JUDGE_ROLE), setup.config(max_tokens), system, official)

    @property
    def name(self) -> str:
        return str(self.model)

    @property
    def comparable(self) -> bool:
        return self.official is not None and self.name == self.official

    async def verdict(self, prompt: str) -> dict[str, Any]:
        messages: list[ChatMessage] = [ChatMessageSystem(content=self.system)] if self.system else []
        output = await self.model.generate([*messages, ChatMessageUser(content=prompt)], config=self.config)
        return parse_verdict(output.completion)
