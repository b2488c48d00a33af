"""Hand-built Inspect logs with Inspect's own types, native (ToolEvents) or bridged (results in inputs).

A rollout is a list of turns; a turn is what the model emitted (tool calls, text) and what the tools
returned. `native=True` logs a ToolEvent per call, as Inspect's react does; `native=False` logs only
ModelEvents, with each turn's results in the next model input, as the agent bridge does.
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inspect_ai.event import ModelEvent, ToolEvent
from inspect_ai.log import EvalConfig, EvalDataset, EvalLog, EvalSample, EvalSpec, write_eval_log
from inspect_ai.model import (
    ChatCompletionChoice,
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageTool,
    ChatMessageUser,
    GenerateConfig,
    ModelCall,
    ModelOutput,
)
from inspect_ai.scorer import Score
from inspect_ai.tool import ToolCall, ToolCallError

from forge_eval.benchmarks.services import TOOL_SPECS
from forge_eval.rundir import TOOL_SPECS_KEY, tool_specs_metadata


def service_metadata(*services: str) -> dict[str, Any]:
    """What forgelab records of a sample's services: their names and how their tools touch them."""
    specs = tool_specs_metadata(s for s in TOOL_SPECS.values() if s.service in services)
    return {"services": list(services), TOOL_SPECS_KEY: specs}


@dataclass
class Call:
    """One tool call and what came back."""

    tool: str
    args: dict[str, Any] = field(default_factory=dict)
    result: str = ""
    error: str | None = None  # a ToolCallError type: "unknown", "timeout", "parsing", ...
    parse_error: str | None = None
    result_id: str | None = None  # the id in the next input, when the harness rewrites it (OpenClaw)
    call_id: str | None = None
    marked: bool = False  # the proxy's `is_error` metadata (a harness marked the failure: Claude Code)


@dataclass
class Turn:
    """One model turn: its calls, its text, and whether the server marked a parse failure."""

    calls: list[Call] = field(default_factory=list)
    text: str = ""
    forge_parse_failed: bool = False


def turn(*calls: Call, text: str = "", forge_parse_failed: bool = False) -> Turn:
    return Turn(list(calls), text, forge_parse_failed)


def _model_event(history: list[ChatMessage], message: ChatMessageAssistant, forge_failed: bool) -> ModelEvent:
    stop = "tool_calls" if message.tool_calls else "stop"
    output = ModelOutput(model="scripted", choices=[ChatCompletionChoice(message=message, stop_reason=stop)])
    # the embedded model server's marker sits at the top of its raw response, which Inspect logs as the call
    raw = {"choices": [], "forge": {"tool_parse": "failed" if forge_failed else "native"}}
    return ModelEvent(
        model="scripted",
        input=list(history),
        tools=[],
        tool_choice="auto",
        config=GenerateConfig(),
        output=output,
        call=ModelCall(request={}, response=raw),
    )


def sample(
    task_id: str,
    turns: list[Turn],
    *,
    epoch: int = 1,
    score: float = 1.0,
    metadata: dict[str, Any] | None = None,
    native: bool = True,
) -> EvalSample:
    """An EvalSample whose events replay `turns`."""
    history: list[ChatMessage] = [ChatMessageUser(content="do the task")]
    events: list[Any] = []
    for t_index, t in enumerate(turns):
        calls = [
            ToolCall(
                id=c.call_id or f"call_{t_index}_{i}",
                function=c.tool,
                arguments=c.args,
                parse_error=c.parse_error,
            )
            for i, c in enumerate(t.calls)
        ]
        message = ChatMessageAssistant(content=t.text, tool_calls=calls or None, model="scripted")
        events.append(_model_event(history, message, t.forge_parse_failed))
        history.append(message)
        for call, spec in zip(calls, t.calls, strict=True):
            error = ToolCallError(spec.error, spec.result) if spec.error else None
            if native:
                events.append(
                    ToolEvent(
                        id=call.id,
                        function=call.function,
                        arguments=call.arguments,
                        result=spec.result,
                        error=error,
                    )
                )
            history.append(
                ChatMessageTool(
                    content=spec.result,
                    tool_call_id=spec.result_id or call.id,
                    function=call.function,
                    error=error,
                    metadata={"is_error": True} if spec.marked else None,
                )
            )
    return EvalSample(
        id=task_id,
        epoch=epoch,
        input="do the task",
        target="",
        messages=history,
        events=events,
        scores={"check": Score(value=score)},
        metadata=metadata or {},
    )


def eval_log(samples: list[EvalSample], *, seed: int = 0, harness: str | None = None) -> EvalLog:
    task_args: dict[str, Any] = {"seed": seed}
    if harness:
        task_args["harness"] = harness
    spec = EvalSpec(
        created="2026-11-29T10:00:00+00:00",
        task="behavior_fixture",
        task_args=task_args,
        dataset=EvalDataset(name="fixture", samples=len(samples)),
        model="mockllm/scripted",
        config=EvalConfig(),
    )
    return EvalLog(eval=spec, status="success", samples=samples)


def run_dir(
    path: Path,
    logs: list[EvalLog],
    *,
    harness: str = "react",
    passed: dict[tuple[str, int, int], bool] | None = None,
) -> Path:
    """A run directory as `forge-eval run` writes it: logs/*.eval, results.json, trials.csv."""
    (path / "logs").mkdir(parents=True, exist_ok=True)
    seeds = sorted({int(log.eval.task_args["seed"]) for log in logs})
    for i, log in enumerate(logs):
        write_eval_log(log, str(path / "logs" / f"{i:02d}-seed-{log.eval.task_args['seed']}.eval"))
    results = {
        "benchmark": "fixture",
        "model": "mockllm/scripted",
        "harness": harness,
        "status": "complete",
        "seeds": seeds,
        "epochs": max(s.epoch for log in logs for s in log.samples or []),
        "metrics": {},
    }
    (path / "results.json").write_text(json.dumps(results))
    if passed is not None:
        with (path / "trials.csv").open("w", newline="") as f:
            writer = csv.writer(f)
            writer.writerow(["task_id", "seed", "epoch", "score", "passed", "error"])
            for (task, seed, epoch), ok in sorted(passed.items()):
                writer.writerow([task, seed, epoch, 1.0 if ok else 0.0, ok, ""])
    return path
