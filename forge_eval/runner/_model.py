"""Resolve `--model` (and `--judge`): the embedded model (started and stopped here) or any Inspect model.

Everything a user can get wrong about a model is checked before a run directory exists: an unknown
provider, a missing API-key variable, an unknown `-M` key, an endpoint that does not answer or that
answers `/models` but fails on chat. Each becomes one message.
"""

import asyncio
import inspect
import os
import re
import sys
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

import httpx
from inspect_ai._util.error import PrerequisiteError
from inspect_ai.model import GenerateConfig, ModelAPI, get_model

from forge_eval._errors import ForgeError, UsageError
from forge_eval.models import (
    DEFAULT_MODEL,
    EMBEDDED_MODELS,
    LOCAL_API_KEY,
    EmbeddedModelServer,
    inspect_model_string,
)

#: Key sent to a local OpenAI-compatible endpoint when its `<SERVICE>_API_KEY` is unset: vLLM and
#: SGLang without `--api-key` accept any key, but Inspect refuses to start without one.
PLACEHOLDER_API_KEY = "EMPTY"
#: Header on forge-eval's own check requests, so a server's log (or a test server) tells them apart
#: from the run's calls.
CHECK_HEADER = "X-Forge-Eval-Check"
_ENDPOINT_TIMEOUT = 5.0
# A healthy server answers a 1-token request in well under a second, a busy one in seconds.
CHAT_CHECK_TIMEOUT = 60.0
_CHAT_CHECK_NOTE_AFTER = 10.0
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

    @property
    def where(self) -> str:
        """How an error message names the endpoint."""
        if self.embedded:
            return f"the embedded model server ({self.label} at {self.base_url})"
        return f"the model endpoint {self.base_url}" if self.base_url else f"model {self.inspect_model}"

    def chat_failure(self) -> ForgeError | None:
        """Whether the model still answers a 1-token chat request (see `chat_failure`)."""
        return chat_failure(self.inspect_model, self.base_url, self.model_args, self.where)

    def get_model(self, role: str | None = None) -> Any:
        """This model as an Inspect `Model` (for a model role)."""
        return get_model(self.inspect_model, base_url=self.base_url, role=role, **self.model_args)


def check_model(
    model: str, base_url: str | None, model_args: dict[str, Any], option: str, *, contact: bool = True
) -> dict[str, Any]:
    """Validate an Inspect model string (and its endpoint, when given and `contact`) before anything runs.

    Returns the model args to run with. `contact=False` (a dry run) checks the name, key variables and
    `-M` keys only: nothing is sent to the endpoint.

    A missing `<SERVICE>_API_KEY` for `openai-api/<service>/...` with an explicit base URL gets
    `PLACEHOLDER_API_KEY` (local servers ignore it; a server that wants a real key answers 401,
    which `check_endpoint` reports). With a base URL the endpoint must list its models and answer a
    1-token chat request (`chat_failure`): a server that is up but cannot chat fails here, in seconds,
    not after minutes of retries inside the run.
    """
    args = dict(model_args)
    service = _openai_api_service(model)
    if service and base_url and "api_key" not in args and not _env(f"{service.upper()}_API_KEY"):
        args["api_key"] = PLACEHOLDER_API_KEY
    check_model_args(model, base_url, args, option)
    if base_url and contact:
        service_key = _env(f"{service.upper()}_API_KEY") if service else None
        served = check_endpoint(base_url, args.get("api_key") or service_key)
        failure = chat_failure(model, base_url, args, f"--model-base-url {base_url}", served)
        if failure is not None:
            raise failure
    return args


def check_model_args(model: str, base_url: str | None, model_args: dict[str, Any], option: str) -> None:
    """Build the Inspect model once (nothing is sent): an unknown provider, a missing key variable or
    an unknown `-M` key becomes a usage error."""
    try:
        get_model(model, base_url=base_url, memoize=False, **model_args)
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
    except TypeError as e:
        error = _model_arg_error(e, model)
        if error is None:
            raise
        raise error from None


def check_embedded_model_args(model: str | None, model_args: dict[str, Any]) -> None:
    """`-M` keys for an embedded model, checked before its server starts (they go to the same
    Inspect provider as an `openai-api/...` endpoint's)."""
    name = inspect_model_string(model or DEFAULT_MODEL)
    check_model_args(name, "http://127.0.0.1:1/v1", {"api_key": LOCAL_API_KEY, **model_args}, "--model")


# "X.__init__() got an unexpected keyword argument 'k'",
# "pkg.X() got multiple values for keyword argument 'k'"
_BAD_KEYWORD = re.compile(
    r"(?:([\w.]+)\(\) )?got (an unexpected|multiple values for) keyword argument '(\w+)'"
)
# Constructor parameters that are not model arguments: Inspect or forge-eval sets them.
_NOT_MODEL_ARGS = frozenset({"self", "model_name", "base_url", "config", "http_client", "timeout"})


def _model_arg_error(error: TypeError, model: str) -> UsageError | None:
    """An `-M` key the model's provider does not take, as a usage error listing the keys it does take.

    Inspect hands `-M` keys to the provider class, which passes those it does not know on to its
    client library (openai's `AsyncOpenAI` for `openai-api`); the TypeError names the callable that
    refused the key. The valid keys are read from both signatures, found through the traceback:
    Inspect keeps no list of them.
    """
    match = _BAD_KEYWORD.search(str(error))
    if match is None:
        return None
    called, kind, key = match.groups()
    callee_name = called.removesuffix(".__init__").rpartition(".")[2] if called else None
    provider: type | None = None
    callee: Any = None
    tb: TracebackType | None = error.__traceback__
    while tb is not None:
        owner = tb.tb_frame.f_locals.get("self")
        if isinstance(owner, ModelAPI):
            provider = type(owner)
        if callee_name:
            callee = tb.tb_frame.f_locals.get(callee_name) or tb.tb_frame.f_globals.get(callee_name, callee)
        tb = tb.tb_next
    valid = {"api_key"}  # get_model's own
    for target in (provider, callee):
        if isinstance(target, type):
            valid |= {
                name
                for name, p in inspect.signature(target.__init__).parameters.items()
                if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
                and not name.startswith("_")
                and name not in _NOT_MODEL_ARGS
            }
    what = "is not an argument of" if kind == "an unexpected" else "is set by Inspect itself for"
    listing = ", ".join(sorted(valid - {key}))
    return UsageError(f"-M {key} {what} {model}. Valid -M keys: {listing}", "drop or correct the -M option")


def check_endpoint(base_url: str, api_key: str | None) -> list[str]:
    """Fail fast, in one line, when an OpenAI-compatible endpoint does not answer or refuses the key.

    Without this Inspect retries a refused connection for many minutes with no output. Returns the
    model ids the endpoint lists (empty when it lists none, or not as `/models` usually does).
    """
    url = base_url.rstrip("/") + "/models"
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    headers[CHECK_HEADER] = "models"
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
    try:
        listed = response.json()["data"]
        return [str(entry["id"]) for entry in listed if isinstance(entry, dict) and "id" in entry]
    except (ValueError, KeyError, TypeError):
        return []


def chat_failure(
    model: str,
    base_url: str | None,
    model_args: dict[str, Any],
    where: str,
    served: list[str] | None = None,
    timeout: float | None = None,
) -> ForgeError | None:
    """Send one 1-token chat request the way the run sends its calls (through Inspect, with the run's
    model arguments, no retries); how it failed, as an error that says what to do, or None.

    Args:
        model: The Inspect model string.
        base_url: Its base URL (None: the provider's default).
        model_args: The run's model arguments.
        where: How the message names the endpoint ("--model-base-url URL", "the embedded model server").
        served: Model ids the endpoint listed, for the hint when it does not know the model.
        timeout: Seconds before a silent endpoint counts as failed (default `CHAT_CHECK_TIMEOUT`).
    """
    limit = CHAT_CHECK_TIMEOUT if timeout is None else timeout
    try:
        asyncio.run(_one_token(model, base_url, model_args, where, limit))
    except TimeoutError:
        return ForgeError(
            f"{where} did not answer a 1-token chat request within {limit:.0f} s",
            "the server is stuck or overloaded: check its log and load, then re-run",
        )
    except Exception as e:  # whatever the provider raised: reported, never a traceback
        return _chat_error(_root_cause(e), where, model, served or [])
    return None


async def _one_token(
    model: str, base_url: str | None, model_args: dict[str, Any], where: str, limit: float
) -> None:
    # memoize=False: a cached Model would keep an HTTP client bound to this short-lived event loop
    client = get_model(model, base_url=base_url, memoize=False, **model_args)
    config = GenerateConfig(max_tokens=1, max_retries=0, extra_headers={CHECK_HEADER: "chat"})
    call = asyncio.ensure_future(client.generate("Reply with OK.", config=config))
    done, _ = await asyncio.wait({call}, timeout=min(_CHAT_CHECK_NOTE_AFTER, limit))
    if not done:
        print(
            f"forge-eval: waiting for {where} to answer a 1-token chat request (up to {limit:.0f} s)",
            file=sys.stderr,
            flush=True,
        )
    await asyncio.wait_for(call, timeout=max(0.0, limit - _CHAT_CHECK_NOTE_AFTER))


def _root_cause(error: BaseException) -> BaseException:
    """The provider's exception inside tenacity's RetryError (Inspect's retry wrapper)."""
    last = getattr(error, "last_attempt", None)
    inner = last.exception() if last is not None else None
    return inner if inner is not None else error


def _detail(cause: BaseException) -> str:
    """The server's own words: the error body's message (openai-style clients), else the exception's."""
    body = getattr(cause, "body", None)
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        body = body["error"]
    text = body.get("message") if isinstance(body, dict) else None
    if not isinstance(text, str) or not text.strip():
        text = getattr(cause, "message", None) or str(cause) or type(cause).__name__
    return " ".join(text.split())


def _chat_error(cause: BaseException, where: str, model: str, served: list[str]) -> ForgeError:
    status = getattr(cause, "status_code", None)
    detail = _detail(cause)
    if status is None:
        return ForgeError(
            f"{where} does not answer chat requests ({type(cause).__name__}: {detail})",
            "start the server first, or fix the URL (it usually ends in /v1)",
        )
    if status in (401, 403):
        return ForgeError(
            f"{where} refused the API key on chat (HTTP {status}: {detail})",
            "export the key the server expects in the model's <SERVICE>_API_KEY variable",
        )
    if status == 404:
        name = model.split("/")[-1]
        hint = (
            f"it serves: {', '.join(served)}; name one of them in --model"
            if served
            else "check the model name in --model (the server's /models lists what it serves)"
        )
        return ForgeError(f"{where} cannot chat with model '{name}' (HTTP 404: {detail})", hint)
    if status >= 500:
        return ForgeError(
            f"{where} fails on chat requests (HTTP {status}: {detail})",
            "the server is up but cannot answer: check its log (still loading the model? out of memory? "
            "overloaded?) and re-run once it answers",
        )
    return ForgeError(
        f"{where} refuses a minimal chat request (HTTP {status}: {detail})",
        "check that the URL serves the OpenAI Chat Completions API and that -M options fit the server",
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


#: How a run gets its model: `resolved_model`'s arguments to a block that yields it (a cluster node may
#: hand its shards one embedded server instead of one each).
ModelServing = Callable[..., AbstractContextManager[ResolvedModel]]
