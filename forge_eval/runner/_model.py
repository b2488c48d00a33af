"""Resolve `--model`: the embedded model (started and stopped here) or any Inspect model string."""

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from forge_eval.models import EMBEDDED_MODELS, EmbeddedModelServer


@dataclass(frozen=True)
class ResolvedModel:
    """What Inspect needs to reach the model, and how to name it in results.

    `base_url` is passed to Inspect as `model_base_url`: Inspect's eval_set leaves it out of a task's
    identity (so a resumed run on a new port of the embedded server still matches its finished logs)
    but keys its model cache on it (so two runs in one process never share a stale client).
    """

    inspect_model: str
    label: str
    embedded: bool
    base_url: str | None = None
    model_args: dict[str, Any] = field(default_factory=dict)


@contextmanager
def resolved_model(
    model: str | None, base_url: str | None = None, model_args: dict[str, Any] | None = None
) -> Iterator[ResolvedModel]:
    """Yield the model of a run; an embedded model's server lives exactly as long as the block."""
    if model is not None and model not in EMBEDDED_MODELS:
        yield ResolvedModel(model, model, embedded=False, base_url=base_url, model_args=model_args or {})
        return
    with EmbeddedModelServer(model) as server:
        ref = server.inspect_model()
        yield ResolvedModel(
            ref.model,
            server.model_name,
            embedded=True,
            base_url=ref.base_url,
            model_args={**ref.model_args, **(model_args or {})},
        )
