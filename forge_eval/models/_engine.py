"""The inference engine behind the server: llama.cpp (xllamacpp) loaded in this process.

Measured against the alternative (xllamacpp's own HTTP listener behind ours): a 1-token request
costs ~7 ms in-process versus ~30 ms through the extra HTTP hop, and there is one process to
supervise instead of two. xllamacpp releases the GIL while it computes, so requests run in worker
threads and the event loop stays responsive.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

import xllamacpp

from forge_eval._errors import ForgeError
from forge_eval.models._slots import SlotRouter
from forge_eval.models._threads import default_threads


class ChatEngine(Protocol):
    """Answers OpenAI chat-completion requests (non-streaming); safe to call from several threads."""

    def complete(self, request: dict[str, Any]) -> dict[str, Any]: ...


class EngineRequestError(Exception):
    """The engine refused a request (bad field, prompt longer than the context)."""

    def __init__(self, status: int, body: dict[str, Any]) -> None:
        super().__init__(body.get("error", {}).get("message", str(body)))
        self.status = status
        self.body = body


class LlamaEngine:
    """A GGUF model served by llama.cpp with `n_parallel` slots of `n_ctx_per_slot` tokens each.

    Args:
        model_path: The GGUF file.
        threads: CPU threads for generation and prompt processing (None: `default_threads()`).
        n_parallel: Slots: requests decoded together (continuous batching), each keeping its last
            prompt cached. Twice the 2 connections a run opens, because Inspect keeps 2 samples per
            seed in flight and `make run` runs 2 seeds: one slot per live conversation, which
            `SlotRouter` sends back to it.
        n_ctx_per_slot: Context tokens available to each request.
        verbose: llama.cpp logs every request (timings, slots) to stderr; otherwise only errors.
    """

    def __init__(
        self,
        model_path: Path,
        threads: int | None = None,
        n_parallel: int = 4,
        n_ctx_per_slot: int = 8192,
        verbose: bool = False,
    ):
        params = xllamacpp.CommonParams()
        params.model.path = str(model_path)
        params.n_parallel = n_parallel
        params.n_ctx = n_ctx_per_slot * n_parallel
        for cpu in (params.cpuparams, params.cpuparams_batch):
            cpu.n_threads = threads or default_threads()
            # Busy-polling threads fight for the 2 cores: default polling made speed swing 2..38 tok/s.
            cpu.poll = 0
        params.use_jinja = True
        # Return the model's text as is: forge-eval's lenient parser finds the tool calls. llama.cpp's
        # own parser fails the whole request (RuntimeError) when the model writes <tool_call> tags
        # around a call it cannot parse, e.g. of an undeclared tool, losing the text. This parser
        # also drops a final assistant message (prefill), which the app therefore refuses.
        params.force_pure_content_parser = True
        params.warmup = False
        params.verbosity = 3 if verbose else 1
        try:
            self._server = xllamacpp.Server(params)
        except Exception as e:
            raise ForgeError(f"llama.cpp could not load {model_path}: {e}") from e
        self._slots = SlotRouter(n_parallel)

    def complete(self, request: dict[str, Any]) -> dict[str, Any]:
        return self._on_slot(self._server.handle_chat_completions, request, request.get("messages") or [])

    def complete_ids(
        self, prompt_ids: list[int], sampling: dict[str, Any], messages: list[Any]
    ) -> dict[str, Any]:
        """Sample a completion of a prompt given as token ids (llama.cpp evaluates exactly these);
        `messages` only picks the slot whose cached prompt it extends."""
        return self._on_slot(self._server.handle_completions, {**sampling, "prompt": prompt_ids}, messages)

    def _on_slot(
        self, handle: Callable[[dict[str, Any]], dict[str, Any]], request: dict[str, Any], messages: list[Any]
    ) -> dict[str, Any]:
        """`handle(request)` on the slot whose cached prompt `messages` extend; llama.cpp's refusal of
        the request becomes the HTTP 400 an OpenAI server gives."""
        slot = self._slots.acquire(messages)
        try:
            result = handle(request if slot is None else {**request, "id_slot": slot})
        except ValueError as e:
            raise EngineRequestError(
                400, {"error": {"message": str(e), "type": "invalid_request_error"}}
            ) from e
        finally:
            if slot is not None:
                self._slots.release(slot)
        return _checked(result)


def _checked(result: dict[str, Any]) -> dict[str, Any]:
    if "error" in result:
        error = result["error"]
        raise EngineRequestError(int(error.get("code", 500)), result)
    return result
