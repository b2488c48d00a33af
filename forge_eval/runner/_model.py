"""Resolve `--model`: the embedded model (started and stopped here) or any Inspect model string."""

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from forge_eval.models import EMBEDDED_MODELS, EmbeddedModelServer

# The embedded server's URL goes through the environment, not `model_base_url`: its port changes from
# run to run, and Inspect's eval_set would otherwise see a different task and redo finished work.
_SERVICE = "forge"


@dataclass(frozen=True)
class ResolvedModel:
    """What Inspect needs to reach the model, and how to name it in results."""

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
        name = server.model_name
        saved = {
            k: os.environ.get(k) for k in (f"{_SERVICE.upper()}_BASE_URL", f"{_SERVICE.upper()}_API_KEY")
        }
        os.environ[f"{_SERVICE.upper()}_BASE_URL"] = server.base_url
        os.environ[f"{_SERVICE.upper()}_API_KEY"] = "local"
        try:
            yield ResolvedModel(
                f"openai-api/{_SERVICE}/{name}", name, embedded=True, model_args=model_args or {}
            )
        finally:
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value
