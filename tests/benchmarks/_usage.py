"""Token usage for scripted model outputs in the benchmark tests.

An output without usage has its tokens counted by Inspect with tiktoken, which downloads its encoding
(and fails offline); the scripted models here give each output this fixed usage instead.
"""

from __future__ import annotations

from inspect_ai.model import ModelOutput, ModelUsage

USAGE = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)


def counted(output: ModelOutput) -> ModelOutput:
    """`output`, carrying `USAGE`."""
    output.usage = USAGE
    return output
