"""The small policy: a 2-layer causal transformer over the ablation's word vocabulary, trained from scratch.

Sampling and training share one constrained distribution (`_tokens.allowed`): the sampler renormalises the
logits over the tokens the grammar allows, and `response_logprobs` recomputes exactly that from the
recorded token ids, so the recorded logprobs and the trainer's agree (checked every step).
"""

import hashlib
from collections.abc import Sequence

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

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        """Logits (batch, length, vocab) of right-padded `ids` (batch, length)."""
        x = self.tokens(ids) + self.positions.weight[: ids.shape[1]]
        for block in self.blocks:
            x = block(x)
        return self.norm(x) @ self.tokens.weight.T


def _constrained(logits: torch.Tensor, allowed: frozenset[int]) -> torch.Tensor:
    mask = torch.full_like(logits, float("-inf"))
    mask[list(allowed)] = 0.0
    return torch.log_softmax(logits + mask, dim=-1)


@torch.inference_mode()
def generate(
    model: TinyPolicy, prompt: Sequence[int], *, temperature: float, seed: int
) -> tuple[list[int], list[float]]:
    """One assistant turn: (token ids, logprobs of the sampled tokens at temperature 1).

    A fresh generator seeded per call makes each call's sample independent of what else the server is
    doing, so a run's rollouts are reproducible whatever order the harness's calls arrive in.
    """
    generator = torch.Generator().manual_seed(seed)
    generated: list[int] = []
    logprobs: list[float] = []
    for _ in range(_tokens.MAX_TURN_TOKENS):
        allowed = _tokens.allowed(prompt, generated)
        if not allowed:
            break
        logits = model(torch.tensor([[*prompt, *generated]]))[0, -1]
        logp = _constrained(logits, allowed)
        if temperature <= 0:
            token = int(torch.argmax(logp))
        else:
            probs = torch.softmax(_constrained(logits / temperature, allowed), dim=-1)
            token = int(torch.multinomial(probs, 1, generator=generator))
        generated.append(token)
        logprobs.append(float(logp[token]))
    return generated, logprobs


def response_logprobs(
    model: TinyPolicy, prompts: Sequence[Sequence[int]], responses: Sequence[Sequence[int]]
) -> list[torch.Tensor]:
    """Per row, the constrained logprob of each response token under the current weights (with grad)."""
    rows = [[*p, *r] for p, r in zip(prompts, responses, strict=True)]
    width = max(len(r) for r in rows)
    ids = torch.tensor([r + [0] * (width - len(r)) for r in rows])
    logits = model(ids)
    out = []
    for b, (prompt, response) in enumerate(zip(prompts, responses, strict=True)):
        start = len(prompt) - 1
        masks = torch.full((len(response), logits.shape[-1]), float("-inf"))
        for i in range(len(response)):
            masks[i, list(_tokens.allowed(prompt, response[:i]))] = 0.0
        logp = torch.log_softmax(logits[b, start : start + len(response)] + masks, dim=-1)
        out.append(logp.gather(1, torch.tensor(response).unsqueeze(1)).squeeze(1))
    return out


def weights_hash(model: nn.Module) -> str:
    """A digest of the weights (equal initial weights across variants is asserted on this)."""
    h = hashlib.sha256()
    for name, tensor in sorted(model.state_dict().items()):
        h.update(name.encode())
        h.update(tensor.detach().contiguous().numpy().tobytes())
    return h.hexdigest()[:16]
