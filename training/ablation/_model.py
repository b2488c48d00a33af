"""The small policy: a 2-layer causal transformer over the ablation's word vocabulary, trained from scratch.

Sampling and training share one constrained distribution (the policy's `Grammar.allowed`, `_logprobs`):
the sampler renormalises the logits over the tokens the grammar allows, and `response_logprobs` recomputes
exactly that from the recorded token ids, so the recorded logprobs and the trainer's agree (checked every
step). `sample` and `response_logprobs` serve any `Policy`: this tiny one or the pretrained SmolLM2.
"""

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from forge_eval.training.ablation import _tokens

MAX_LEN = 128


class _Block(nn.Module):
    """Pre-norm attention + MLP block, written out because nn.TransformerEncoderLayer's dispatch costs
    more than the arithmetic at this size."""

    def __init__(self, d_model: int, n_heads: int) -> None:
        super().__init__()
        self.n_heads = n_heads
        self.norm1, self.norm2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.qkv, self.out = nn.Linear(d_model, 3 * d_model), nn.Linear(d_model, d_model)
        self.up, self.down = nn.Linear(d_model, 2 * d_model), nn.Linear(2 * d_model, d_model)

    def forward(
        self, x: torch.Tensor, mask: torch.Tensor | None, past: tuple[torch.Tensor, torch.Tensor] | None
    ) -> tuple[torch.Tensor, tuple[torch.Tensor, torch.Tensor]]:
        """(output, this layer's keys and values so far): `past` holds those of the tokens before `x`."""
        b, t, d = x.shape
        q, k, v = (
            self.qkv(self.norm1(x)).view(b, t, 3, self.n_heads, d // self.n_heads).permute(2, 0, 3, 1, 4)
        )
        if past is not None:
            k, v = torch.cat([past[0], k], dim=2), torch.cat([past[1], v], dim=2)
        attended = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=mask is None)
        x = x + self.out(attended.transpose(1, 2).reshape(b, t, d))
        return x + self.down(F.gelu(self.up(self.norm2(x)))), (k, v)


class TinyPolicy(nn.Module):
    """GPT-style decoder: token + position embeddings, pre-norm blocks, tied output projection.

    Initialised with std 0.02 (GPT-2): with N(0, 1) tied embeddings a model this small only learns to
    copy its input (reference runtime.md, "Training on CPU").
    """

    grammar: _tokens.Grammar = _tokens.WORD_GRAMMAR
    max_len = MAX_LEN

    def __init__(
        self,
        d_model: int = 64,
        n_layers: int = 2,
        n_heads: int = 4,
        vocab: int = _tokens.VOCAB_SIZE,
    ):
        super().__init__()
        self.tokens = nn.Embedding(vocab, d_model)
        self.positions = nn.Embedding(MAX_LEN, d_model)
        self.blocks = nn.ModuleList(_Block(d_model, n_heads) for _ in range(n_layers))
        self.norm = nn.LayerNorm(d_model)
        for p in self.parameters():
            if p.dim() > 1:
                nn.init.normal_(p, std=0.02)

    def hidden(
        self, ids: torch.Tensor, cache: Any = None, valid: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, Any]:
        """Final hidden states (batch, new length, d) of `ids` after the tokens whose per-layer keys and
        values `cache` holds, and the cache extended by `ids`. `valid` (batch, full length) marks real
        tokens when rows have padding inside (see `Policy.hidden`)."""
        t = ids.shape[1]
        if valid is None:  # the trainer's call: whole rows, no cache
            x, mask = self.tokens(ids) + self.positions.weight[:t], None
        else:
            x = self.tokens(ids) + self.positions(positions(valid)[:, -t:])
            mask = attention_mask(valid)[:, :, -t:]
        layers = []
        for i, block in enumerate(self.blocks):
            x, kv = block(x, mask, None if cache is None else cache[i])
            layers.append(kv)
        return self.norm(x), layers

    @property
    def unembedding(self) -> torch.Tensor:
        return self.tokens.weight


def positions(valid: torch.Tensor) -> torch.Tensor:
    """Each token's position counted over the real tokens of its row (padding takes none)."""
    return (valid.long().cumsum(dim=1) - 1).clamp(min=0)


def attention_mask(valid: torch.Tensor) -> torch.Tensor:
    """(batch, 1, length, length): causal over the real tokens; a padding query attends to itself only
    (a query with nothing to attend to would give nan, which reaches real tokens through 0 * nan)."""
    t = valid.shape[1]
    causal = torch.ones(t, t, dtype=torch.bool).tril()
    return ((causal & valid[:, None, :]) | torch.eye(t, dtype=torch.bool))[:, None]


class Policy(Protocol):
    """What the sampler and the trainer need of a policy (`TinyPolicy`, SmolLM2's wrapper).

    `hidden(ids)` alone is the trainer's call: right-padded rows, plainly causal (padding after a row's
    tokens cannot reach them). The sampler passes `valid` and a `cache` as well: its rows grow by one
    token per step from prompts of different lengths, so padding sits inside rows; positions and
    attention then count real tokens only, which gives each row what it would get alone.
    """

    grammar: _tokens.Grammar
    max_len: int

    def hidden(
        self, ids: torch.Tensor, cache: Any = None, valid: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, Any]: ...

    @property
    def unembedding(self) -> torch.Tensor: ...


def _logprobs(h: torch.Tensor, policy: Policy, vocabulary: list[int], allowed: torch.Tensor) -> torch.Tensor:
    """The constrained distribution (log-probabilities over the grammar's `vocabulary`, disallowed tokens
    at -inf) from hidden states `h` (n, d): only the grammar's rows of the output projection are
    computed, which keeps a 49,152-token vocabulary as cheap as a 43-word one. Sampler and trainer both
    use it, so the logprobs a call records are the ones the trainer recomputes."""
    logits = h @ policy.unembedding[vocabulary].T
    return torch.log_softmax(logits.masked_fill(~allowed, float("-inf")), dim=-1)


@dataclass(frozen=True)
class Turn:
    """One request to the sampler: a rendered prompt, its temperature and the call's own seed."""

    prompt: Sequence[int]
    temperature: float
    seed: int


@torch.inference_mode()
def sample(policy: Policy, turns: Sequence[Turn]) -> list[tuple[list[int], list[float]]]:
    """One assistant turn per request, all in one batch: (token ids, logprobs at temperature 1) each.

    Every step runs one forward over all rows (a step of the ablation samples its rollouts' calls
    together instead of one call at a time). Each row draws by inverse CDF from uniforms seeded by its
    own call, so a call's sample does not depend on the other rows in the batch.
    """
    vocabulary = sorted(policy.grammar.vocabulary)
    column = {t: i for i, t in enumerate(vocabulary)}
    n = len(turns)
    width = max(len(t.prompt) for t in turns)
    ids = torch.zeros(n, width, dtype=torch.long)
    valid = torch.zeros(n, width, dtype=torch.bool)
    for i, t in enumerate(turns):
        ids[i, : len(t.prompt)] = torch.tensor(list(t.prompt))
        valid[i, : len(t.prompt)] = True
    uniforms = torch.from_numpy(
        np.stack([np.random.default_rng(t.seed).random(_tokens.MAX_TURN_TOKENS) for t in turns])
    )
    temperature = torch.tensor([t.temperature for t in turns], dtype=torch.float64)
    greedy = temperature <= 0
    h, cache = policy.hidden(ids, None, valid)
    last = h[torch.arange(n), torch.tensor([len(t.prompt) - 1 for t in turns])]
    generated: list[list[int]] = [[] for _ in turns]
    logprobs: list[list[float]] = [[] for _ in turns]
    vocabulary_ids = torch.tensor(vocabulary)
    for step in range(_tokens.MAX_TURN_TOKENS):
        allowed = [policy.grammar.allowed(t.prompt, g) for t, g in zip(turns, generated, strict=True)]
        active = torch.tensor([bool(a) for a in allowed])
        if not active.any():
            break
        mask = torch.zeros(n, len(vocabulary), dtype=torch.bool)
        for i, a in enumerate(allowed):
            mask[i, [column[x] for x in a]] = True
        mask[~active] = True  # finished rows: any finite row (nothing is drawn from it)
        logp = _logprobs(last, policy, vocabulary, mask)
        tempered = torch.softmax(logp.double() / temperature.clamp(min=1e-6)[:, None], dim=-1)
        drawn = (tempered.cumsum(dim=-1) <= uniforms[:, step, None]).sum(dim=-1)
        # the last allowed column absorbs the CDF's rounding below 1
        drawn = torch.minimum(drawn, (mask * torch.arange(len(vocabulary))).argmax(dim=-1))
        picked = torch.where(greedy, logp.argmax(dim=-1), drawn)
        chosen = logp.gather(1, picked[:, None])[:, 0]
        for i in torch.nonzero(active)[:, 0].tolist():
            generated[i].append(vocabulary[int(picked[i])])
            logprobs[i].append(float(chosen[i]))
        valid = torch.cat([valid, active[:, None]], dim=1)
        h, cache = policy.hidden(vocabulary_ids[picked][:, None], cache, valid)
        last = h[:, -1]
    return [(g, lp) for g, lp in zip(generated, logprobs, strict=True)]


BUCKET_SPREAD = 1.3  # rows share a padded forward while the longest is at most this x the shortest


def _buckets(lengths: Sequence[int]) -> list[list[int]]:
    """Rows grouped by length, each group padded to its own longest: a step's rows are of a few kinds
    (a planner call, a subagent call, a chain of actions) whose lengths differ by half, and padding every
    row to the longest cost a third of the update's arithmetic."""
    groups: list[list[int]] = []
    for b in sorted(range(len(lengths)), key=lambda k: lengths[k]):
        if groups and lengths[b] <= BUCKET_SPREAD * lengths[groups[-1][0]]:
            groups[-1].append(b)
        else:
            groups.append([b])
    return groups


@dataclass(frozen=True)
class Responses:
    """The trained tokens of one update as flat tensors, with what the grammar allowed at each: the
    grammar depends on token ids alone, so this is built once per update and reused by every epoch
    (walking the grammar per token per epoch cost more than the forward pass).

    A row is a prompt and a response; its `segments` are the sampled calls to score, (start, length) in
    response coordinates. A prefix-merged row holds several calls with the tokens between them (tool
    results, user turns), which are context only; call k's prompt is everything before its segment.
    Rows of similar length share one right-padded forward (`buckets`); tokens are ordered by bucket.
    """

    buckets: list[tuple[torch.Tensor, torch.Tensor, torch.Tensor]]  # (ids, local row, position) each
    row: torch.Tensor  # (tokens,) the row of each scored token
    offset: torch.Tensor  # (tokens,) its index in its row's response (a column of the loss matrices)
    vocabulary: list[int]  # the grammar's token ids, the columns below
    allowed: torch.Tensor  # (tokens, vocabulary) what the grammar allowed
    picked: torch.Tensor  # (tokens,) the column of the generated token

    @classmethod
    def build(
        cls,
        policy: Policy,
        prompts: Sequence[Sequence[int]],
        responses: Sequence[Sequence[int]],
        segments: Sequence[Sequence[tuple[int, int]]] | None = None,
    ) -> "Responses":
        """`segments` None: every response is one sampled call, scored whole."""
        vocabulary = sorted(policy.grammar.vocabulary)
        column = {t: i for i, t in enumerate(vocabulary)}
        full = [[*p, *r] for p, r in zip(prompts, responses, strict=True)]
        spans = segments if segments is not None else [[(0, len(r))] for r in responses]
        buckets = []
        row, offset, allowed, picked = [], [], [], []
        for members in _buckets([len(f) for f in full]):
            width = max(len(full[b]) for b in members)
            local, position = [], []
            for k, b in enumerate(members):
                prompt, response = prompts[b], responses[b]
                for start, length in spans[b]:
                    call_prompt = full[b][: len(prompt) + start]
                    for i in range(start, start + length):
                        row.append(b)
                        offset.append(i)
                        local.append(k)
                        position.append(len(prompt) - 1 + i)
                        mask = [False] * len(vocabulary)
                        for t in policy.grammar.allowed(call_prompt, response[start:i]):
                            mask[column[t]] = True
                        allowed.append(mask)
                        picked.append(column[response[i]])
            ids = torch.tensor([full[b] + [0] * (width - len(full[b])) for b in members])
            buckets.append(
                (ids, torch.tensor(local, dtype=torch.long), torch.tensor(position, dtype=torch.long))
            )
        return cls(
            buckets,
            torch.tensor(row),
            torch.tensor(offset),
            vocabulary,
            torch.tensor(allowed),
            torch.tensor(picked),
        )


def response_logprobs(policy: Policy, batch: Responses) -> tuple[torch.Tensor, torch.Tensor]:
    """(the constrained logprob of each response token, the entropy of the constrained distribution it
    was drawn from), flat over `batch`'s tokens, under the current weights, with grad."""
    h = torch.cat([policy.hidden(ids)[0][local, position] for ids, local, position in batch.buckets])
    logp = _logprobs(h, policy, batch.vocabulary, batch.allowed)
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
