"""The small policy: a 2-layer causal transformer over the ablation's word vocabulary, trained from scratch.

Sampling and training share one constrained distribution (the policy's `Grammar.allowed`): the sampler
renormalises the logits over the tokens the grammar allows, and `response_logprobs` recomputes exactly
that from the recorded token ids, so the recorded logprobs and the trainer's agree (checked every step).
`generate` and `response_logprobs` serve any `Policy`: this tiny one or the pretrained SmolLM2.
"""

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import torch
import torch.nn.functional as F
from torch import nn

from forge_eval.training.ablation import _tokens

MAX_LEN = 128


class _Block(nn.Module):
    """Pre-norm attention + MLP block, written out because nn.TransformerEncoderLayer's dispatch costs
    more than the arithmetic at this size (every call of the harness runs several batch-1 forwards)."""

    def __init__(self, d_model: int, n_heads: int) -> None:
        super().__init__()
        self.n_heads = n_heads
        self.norm1, self.norm2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.qkv, self.out = nn.Linear(d_model, 3 * d_model), nn.Linear(d_model, d_model)
        self.up, self.down = nn.Linear(d_model, 2 * d_model), nn.Linear(2 * d_model, d_model)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        q, k, v = (
            self.qkv(self.norm1(x)).view(b, t, 3, self.n_heads, d // self.n_heads).permute(2, 0, 3, 1, 4)
        )
        attended = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(b, t, d)
        x = x + self.out(attended)
        return x + self.down(F.gelu(self.up(self.norm2(x))))


class TinyPolicy(nn.Module):
    """GPT-style decoder: token + position embeddings, pre-norm blocks, tied output projection.

    Initialised with std 0.02 (GPT-2): with N(0, 1) tied embeddings a model this small only learns to
    copy its input (reference runtime.md, "Training on CPU").
    """

    grammar: _tokens.Grammar = _tokens.WORD_GRAMMAR
    max_len = MAX_LEN

    def __init__(
        self, d_model: int = 64, n_layers: int = 2, n_heads: int = 4, vocab: int = _tokens.VOCAB_SIZE
    ):
        super().__init__()
        self.tokens = nn.Embedding(vocab, d_model)
        self.positions = nn.Embedding(MAX_LEN, d_model)
        self.blocks = nn.ModuleList(_Block(d_model, n_heads) for _ in range(n_layers))
        self.norm = nn.LayerNorm(d_model)
        for p in self.parameters():
            if p.dim() > 1:
                nn.init.normal_(p, std=0.02)

    def hidden(self, ids: torch.Tensor, cache: Any = None) -> tuple[torch.Tensor, Any]:
        """Final hidden states (batch, new length, d) of `ids` appended to `cache` (here: the ids so
        far; recomputing them costs less than keeping per-layer keys and values at this size)."""
        full = ids if cache is None else torch.cat([cache, ids], dim=1)
        x = self.tokens(full) + self.positions.weight[: full.shape[1]]
        for block in self.blocks:
            x = block(x)
        return self.norm(x)[:, full.shape[1] - ids.shape[1] :], full

    @property
    def unembedding(self) -> torch.Tensor:
        return self.tokens.weight


class Policy(Protocol):
    """What the sampler and the trainer need of a policy (`TinyPolicy`, SmolLM2's wrapper)."""

    grammar: _tokens.Grammar
    max_len: int

    def hidden(self, ids: torch.Tensor, cache: Any = None) -> tuple[torch.Tensor, Any]: ...

    @property
    def unembedding(self) -> torch.Tensor: ...


def _constrained(h: torch.Tensor, policy: Policy, allowed: frozenset[int]) -> tuple[list[int], torch.Tensor]:
    """(allowed ids, their log-probabilities) from hidden states `h` (..., d): only the allowed rows of
    the output projection are computed, which is exact for the constrained softmax and keeps a
    49,152-token vocabulary as cheap as a 43-word one."""
    ids = sorted(allowed)
    return ids, torch.log_softmax(h @ policy.unembedding[ids].T, dim=-1)


@torch.inference_mode()
def generate(
    policy: Policy, prompt: Sequence[int], *, temperature: float, seed: int
) -> tuple[list[int], list[float]]:
    """One assistant turn: (token ids, logprobs of the sampled tokens at temperature 1).

    A fresh generator seeded per call makes each call's sample independent of what else the server is
    doing, so a run's rollouts are reproducible whatever order the harness's calls arrive in.
    """
    generator = torch.Generator().manual_seed(seed)
    generated: list[int] = []
    logprobs: list[float] = []
    h, cache = policy.hidden(torch.tensor([list(prompt)]))
    for _ in range(_tokens.MAX_TURN_TOKENS):
        allowed = policy.grammar.allowed(prompt, generated)
        if not allowed:
            break
        ids, logp = _constrained(h[0, -1], policy, allowed)
        if temperature <= 0:
            k = int(torch.argmax(logp))
        else:
            k = int(torch.multinomial(torch.softmax(logp / temperature, dim=-1), 1, generator=generator))
        generated.append(ids[k])
        logprobs.append(float(logp[k]))
        h, cache = policy.hidden(torch.tensor([[ids[k]]]), cache)
    return generated, logprobs


@dataclass(frozen=True)
class Responses:
    """The rows of one update as flat tensors, one entry per response token, with what the grammar
    allowed at each: the grammar depends on token ids alone, so this is built once per update and
    reused by every epoch (walking the grammar per token per epoch cost more than the forward pass)."""

    ids: torch.Tensor  # (rows, width) prompt + response, right-padded
    row: torch.Tensor  # (tokens,) the row of each response token
    position: torch.Tensor  # (tokens,) the position whose hidden state predicts it
    vocabulary: list[int]  # the grammar's token ids, the columns below
    allowed: torch.Tensor  # (tokens, vocabulary) what the grammar allowed
    picked: torch.Tensor  # (tokens,) the column of the generated token

    @classmethod
    def build(
        cls, policy: Policy, prompts: Sequence[Sequence[int]], responses: Sequence[Sequence[int]]
    ) -> "Responses":
        vocabulary = sorted(policy.grammar.vocabulary)
        column = {t: i for i, t in enumerate(vocabulary)}
        full = [[*p, *r] for p, r in zip(prompts, responses, strict=True)]
        width = max(len(f) for f in full)
        row, position, allowed, picked = [], [], [], []
        for b, (prompt, response) in enumerate(zip(prompts, responses, strict=True)):
            for i, token in enumerate(response):
                row.append(b)
                position.append(len(prompt) - 1 + i)
                mask = [False] * len(vocabulary)
                for t in policy.grammar.allowed(prompt, response[:i]):
                    mask[column[t]] = True
                allowed.append(mask)
                picked.append(column[token])
        return cls(
            torch.tensor([f + [0] * (width - len(f)) for f in full]),
            torch.tensor(row),
            torch.tensor(position),
            vocabulary,
            torch.tensor(allowed),
            torch.tensor(picked),
        )


def response_logprobs(policy: Policy, batch: Responses) -> tuple[torch.Tensor, torch.Tensor]:
    """(the constrained logprob of each response token, the entropy of the constrained distribution it
    was drawn from), flat over `batch`'s tokens, under the current weights, with grad. The same softmax as
    `_constrained`: over the grammar's vocabulary with the disallowed tokens masked out."""
    h, _ = policy.hidden(batch.ids)
    logits = h[batch.row, batch.position] @ policy.unembedding[batch.vocabulary].T
    logp = torch.log_softmax(logits.masked_fill(~batch.allowed, float("-inf")), dim=-1)
    # masked, not multiplied by exp(-inf) = 0: 0 * -inf is nan, and its gradient would be too
    entropy = -(logp.exp() * logp.masked_fill(~batch.allowed, 0.0)).sum(-1)
    return logp.gather(1, batch.picked[:, None])[:, 0], entropy


def weights_hash(model: nn.Module) -> str:
    """A digest of the weights (equal initial weights across variants is asserted on this)."""
    h = hashlib.sha256()
    for name, tensor in sorted(model.state_dict().items()):
        h.update(name.encode())
        h.update(tensor.detach().contiguous().numpy().tobytes())
    return h.hexdigest()[:16]
