"""Engine token ids for the embedded model, the way vLLM returns them (`return_token_ids`).

A trainer needs the ids the engine evaluated and sampled, which llama.cpp's chat endpoint does not return.
Asked for them, this engine renders the conversation with the model's own chat template (read from its GGUF
file by `transformers`, as vLLM renders with the model's Hugging Face template), hands llama.cpp the
prompt *as token ids*, and answers with exactly those ids (`prompt_token_ids`), the sampled ids
(`choices[0].token_ids`) and their logprobs. Without `return_token_ids` requests go to llama.cpp's chat
endpoint unchanged.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from forge_eval._errors import ForgeError
from forge_eval.models._engine import EngineRequestError, LlamaEngine

# Sampling fields (and `--deterministic`'s cache_prompt) passed on to llama.cpp's completion endpoint.
_SAMPLING = ("max_tokens", "temperature", "top_p", "top_k", "min_p", "seed", "stop", "presence_penalty")
_SAMPLING += ("frequency_penalty", "repetition_penalty", "cache_prompt")


def load_tokenizer(model_path: Path) -> Any:
    """The Hugging Face tokenizer and chat template stored in a GGUF file."""
    try:
        # optional: transformers (and gguf, which it reads the file with) only for engine token ids
        from transformers import AutoTokenizer
    except ImportError as e:
        raise ForgeError(
            f"engine token ids need transformers and gguf: {e}",
            hint="pip install transformers gguf (scripts/setup.d/40-verl.sh installs both with veRL)",
        ) from None
    return AutoTokenizer.from_pretrained(str(model_path.parent), gguf_file=model_path.name)


def _text(content: Any) -> str:
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return "" if content is None else str(content)


def _arguments(raw: Any) -> Any:
    """A tool call's arguments as an object: chat templates render them with `tojson`, as vLLM does."""
    if not isinstance(raw, str):
        return raw
    try:
        return json.loads(raw)
    except ValueError:
        return raw


def template_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Chat messages as a Hugging Face template expects them: text content, tool-call arguments parsed."""
    rendered = []
    for m in messages:
        message = {**m, "content": _text(m.get("content"))}
        if m.get("tool_calls"):
            message["tool_calls"] = [
                {
                    **call,
                    "function": {
                        **call["function"],
                        "arguments": _arguments(call["function"].get("arguments")),
                    },
                }
                for call in m["tool_calls"]
            ]
        rendered.append(message)
    return rendered


class TokenIdEngine:
    """`LlamaEngine` answering `return_token_ids` requests with engine token ids (see the module doc)."""

    def __init__(self, engine: LlamaEngine, tokenizer: Any) -> None:
        self.engine = engine
        self.tokenizer = tokenizer

    def complete(self, request: dict[str, Any]) -> dict[str, Any]:
        if not request.get("return_token_ids"):
            return self.engine.complete(request)
        prompt = self.render(request)
        asked = {k: request[k] for k in _SAMPLING if request.get(k) is not None}
        answer = self.engine.complete_ids(prompt, {**asked, "logprobs": 1}, request.get("messages") or [])
        choice = answer["choices"][0]
        sampled = (choice.get("logprobs") or {}).get("content") or []
        message = {"role": "assistant", "content": choice.get("text", "")}
        out_choice: dict[str, Any] = {
            "index": 0,
            "message": message,
            "finish_reason": choice.get("finish_reason"),
            "token_ids": [int(t["id"]) for t in sampled],
        }
        if request.get("logprobs"):
            out_choice["logprobs"] = {
                "content": [
                    {"token": t["token"], "logprob": t["logprob"], "top_logprobs": []} for t in sampled
                ]
            }
        return {
            "id": answer.get("id"),
            "object": "chat.completion",
            "created": answer.get("created"),
            "choices": [out_choice],
            "usage": answer.get("usage"),
            "prompt_token_ids": prompt,
        }

    def render(self, request: dict[str, Any]) -> list[int]:
        """The prompt's token ids under the model's chat template (tools included)."""
        try:
            ids = self.tokenizer.apply_chat_template(
                template_messages(request.get("messages") or []),
                tools=request.get("tools") or None,
                add_generation_prompt=True,
                tokenize=True,
                return_dict=False,
            )
        except Exception as e:  # a template error is the request's problem, reported like llama.cpp's
            raise EngineRequestError(
                400, {"error": {"message": f"chat template: {e}", "type": "invalid_request_error"}}
            ) from e
        return list(ids)
