"""Resolve `--model` (and `--judge`): the embedded model (started and stopped here) or any Inspect model.

Everything a user can get wrong about a model is checked before a run directory exists: an unknown
provider, a missing API-key variable, an endpoint that does not answer. Each becomes one message.
"""

import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import httpx

from forge_eval._errors import ForgeError, UsageError
from forge_eval.models import EMBEDDED_MODELS, EmbeddedModelServer

#: Key sent to a local OpenAI-compatible endpoint when its `<SERVICE>_API_KEY` is unset: vLLM and
#: SGLang without `--api-key` accept any key, but Inspect refuses to start without one.
PLACEHOLDER_API_KEY = "EMPTY"
_ENDPOINT_TIMEOUT = 5.0
_RICH_MARKUP = re.compile(r"\[/?(?:bold|blue|red|yellow|green|italic)[^\]]*\]")


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

    def get_model(self, role: str | None = None) -> Any:
        """This model as an Inspect `Model` (for a model role)."""
        from inspect_ai.model import get_model

        return get_model(self.inspect_model, base_url=self.base_url, role=role, **self.model_args)


def check_model(model: str, base_url: str | None, model_args: dict[str, Any], option: str) -> dict[str, Any]:
    """Validate an Inspect model string (and its endpoint, when given) before anything runs.

    Returns the model args to run with.

    A missing `<SERVICE>_API_KEY` for `openai-api/<service>/...` with an explicit base URL gets
    `PLACEHOLDER_API_KEY` (local servers ignore it; a server that wants a real key answers 401,
    which `check_endpoint` reports).
    """
    from inspect_ai._util.error import PrerequisiteError
    from inspect_ai.model import get_model

    args = dict(model_args)
    service = _openai_api_service(model)
    if service and base_url and "api_key" not in args and not _env(f"{service.upper()}_API_KEY"):
        args["api_key"] = PLACEHOLDER_API_KEY
    try:
        get_model(model, base_url=base_url, **args)
    except PrerequisiteError as e:
        message = " ".join(_RICH_MARKUP.sub("", str(e)).replace("ERROR:", "").split())
        raise UsageError(
            f"{option} {model}: {message}",
            "export the variable it names (an API key may be any value for a local server), "
            "or pass --model-base-url",
        ) from None
    except ValueError as e:
        raise UsageError(
            f"{option} {model}: {e}",
            "give an embedded model (see `forge-eval list`) or an Inspect model string "
            "<provider>/<model>, e.g. openai/gpt-4.1 or openai-api/vllm/Qwen2.5-7B-Instruct",
        ) from None
    if base_url:
        service_key = _env(f"{service.upper()}_API_KEY") if service else None
        check_endpoint(base_url, args.get("api_key") or service_key)
    return args


def check_endpoint(base_url: str, api_key: str | None) -> None:
    """Fail fast, in one line, when an OpenAI-compatible endpoint does not answer or refuses the key.

    Without this Inspect retries a refused connection for many minutes with no output.
    """
    url = base_url.rstrip("/") + "/models"
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    try:
        response = httpx.get(url, headers=headers, timeout=_ENDPOINT_TIMEOUT)
    except httpx.HTTPError as e:
        raise ForgeError(
            f"--model-base-url {base_url} does not answer ({type(e).__name__}: {e or 'no response'})",
            "start the server first, or fix the URL (it usually ends in /v1)",
        ) from None
    if response.status_code in (401, 403):
        raise ForgeError(
            f"--model-base-url {base_url} refused the API key (HTTP {response.status_code})",
            "export the key the server expects in the model's <SERVICE>_API_KEY variable",
        )


def _openai_api_service(model: str) -> str | None:
    parts = model.split("/")
    return parts[1] if len(parts) >= 3 and parts[0] == "openai-api" else None


def _env(name: str) -> str | None:
    return os.environ.get(name.replace("-", "_"))


@contextmanager
def resolved_model(
    model: str | None,
    base_url: str | None = None,
    model_args: dict[str, Any] | None = None,
    deterministic: bool = False,
) -> Iterator[ResolvedModel]:
    """Yield the model of a run; an embedded model's server lives exactly as long as the block."""
    if model is not None and model not in EMBEDDED_MODELS:
        yield ResolvedModel(model, model, embedded=False, base_url=base_url, model_args=model_args or {})
        return
    with EmbeddedModelServer(model, deterministic=deterministic) as server:
        ref = server.inspect_model()
        yield ResolvedModel(
            ref.model,
            server.model_name,
            embedded=True,
            base_url=ref.base_url,
            model_args={**ref.model_args, **(model_args or {})},
        )
