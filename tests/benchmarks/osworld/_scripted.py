"""Scripted model replies for the OSWorld tests: Inspect's mockllm with fixed replies."""

from __future__ import annotations

from inspect_ai.model import Model, ModelOutput, ModelUsage, get_model


def scripted_outputs(replies: list[str]) -> list[ModelOutput]:
    """One output per reply, with usage set: without it mockllm counts tokens with tiktoken."""
    outputs = [ModelOutput.from_content("mockllm/model", r) for r in replies]
    for output in outputs:
        output.usage = ModelUsage(input_tokens=10, output_tokens=5, total_tokens=15)
    return outputs


def scripted_model(replies: list[str]) -> Model:
    """A model that answers `replies` in order."""
    return get_model("mockllm/model", custom_outputs=scripted_outputs(replies))
