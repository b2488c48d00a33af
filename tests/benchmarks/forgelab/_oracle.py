"""Scripted models for forgelab tests: an oracle that follows each task's plan, and a do-nothing one.

They are `mockllm/model` custom_outputs callables: stateless functions of the conversation, so
samples can run concurrently. Every output carries explicit usage (mockllm would otherwise count
tokens with tiktoken, which downloads a file and fails offline).
"""

from __future__ import annotations

from collections.abc import Callable

from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageTool,
    ChatMessageUser,
    GenerateConfig,
    ModelOutput,
    ModelUsage,
)
from inspect_ai.tool import ToolChoice, ToolInfo

from forge_eval.benchmarks.forgelab import TaskSpec

USAGE = ModelUsage(input_tokens=10, output_tokens=5, total_tokens=15)
Outputs = Callable[[list[ChatMessage], list[ToolInfo], ToolChoice, GenerateConfig], ModelOutput]


def _output(output: ModelOutput) -> ModelOutput:
    output.usage = USAGE
    return output


def _call(tool: str, args: dict[str, object]) -> ModelOutput:
    return _output(ModelOutput.for_tool_call(model="mockllm", tool_name=tool, tool_arguments=dict(args)))


def _task_of(messages: list[ChatMessage], tasks: dict[str, TaskSpec]) -> TaskSpec:
    prompt = next(m.text for m in messages if isinstance(m, ChatMessageUser))
    return next(t for t in tasks.values() if t.prompt == prompt)


def oracle(tasks: list[TaskSpec]) -> Outputs:
    """Follow the task's plan step by step; repeat a call whose result was an error; then submit."""
    by_id = {t.id: t for t in tasks}

    def outputs(messages: list[ChatMessage], tools: list[ToolInfo], choice: ToolChoice,
                config: GenerateConfig) -> ModelOutput:
        task = _task_of(messages, by_id)
        calls = [m for m in messages if isinstance(m, ChatMessageAssistant) and m.tool_calls]
        results = [m for m in messages if isinstance(m, ChatMessageTool)]
        if results and results[-1].error is not None:
            last = calls[-1].tool_calls[0]
            return _call(last.function, last.arguments)
        done = len(calls) - sum(r.error is not None for r in results)
        if done < len(task.plan):
            step = task.plan[done]
            return _call(step.tool, step.reference_args())
        return _call("submit", {"answer": task.answer})

    return outputs


def do_nothing(messages: list[ChatMessage], tools: list[ToolInfo], choice: ToolChoice,
               config: GenerateConfig) -> ModelOutput:
    """Submit an empty answer without touching any service."""
    return _call("submit", {"answer": ""})
