"""The tiny policy's trainer side: the batched scorer against the sampler, the entropy bonus, the harness.

The scorer recomputes, for a whole update at once, the constrained distribution the sampler drew each
token from; the references here are the sampler's own per-token computation (`generate`, `_constrained`)
and the entropy's definition, summed by hand.
"""

import math

import pytest

torch = pytest.importorskip("torch", reason="torch is installed by scripts/setup.d/40-verl.sh (CI does)")

from forge_eval.training.ablation._harness import MAIN_SYSTEM, SET_TOOL  # noqa: E402
from forge_eval.training.ablation._model import (  # noqa: E402
    Responses,
    TinyPolicy,
    _constrained,
    generate,
    response_logprobs,
)
from forge_eval.training.ablation._tokens import WORD_GRAMMAR  # noqa: E402


def _sampled(model: TinyPolicy, n: int) -> tuple[list[list[int]], list[list[int]], list[list[float]]]:
    prompts, responses, logprobs = [], [], []
    for k in range(n):
        messages = [
            {"role": "system", "content": MAIN_SYSTEM},
            {"role": "user", "content": f"goal a {k % 3 + 1}"},
        ]
        prompt = WORD_GRAMMAR.render_prompt(messages, [SET_TOOL], "required" if k % 2 else None)
        ids, lps = generate(model, prompt, temperature=1.0, seed=k)
        prompts.append(prompt)
        responses.append(ids)
        logprobs.append(lps)
    return prompts, responses, logprobs


def test_the_batched_scorer_gives_the_samplers_logprobs_and_the_entropy_of_its_distributions():
    torch.manual_seed(0)
    model = TinyPolicy(d_model=32, n_layers=1)
    prompts, responses, logprobs = _sampled(model, 6)
    assert len({len(r) for r in responses}) > 1  # rows of different lengths share one padded forward
    logp, entropy = response_logprobs(model, Responses.build(model, prompts, responses))
    flat = [lp for row in logprobs for lp in row]
    assert logp.shape == (len(flat),)
    assert torch.allclose(logp.detach(), torch.tensor(flat), atol=1e-5)
    expected = []
    with torch.no_grad():
        for prompt, response in zip(prompts, responses, strict=True):
            h, _ = model.hidden(torch.tensor([prompt + response]))
            for i in range(len(response)):
                _, lp = _constrained(
                    h[0, len(prompt) - 1 + i], model, WORD_GRAMMAR.allowed(prompt, response[:i])
                )
                expected.append(-sum(math.exp(x) * x for x in lp.tolist()))
    assert torch.allclose(entropy.detach(), torch.tensor(expected), atol=1e-5)
    assert any(e == pytest.approx(0.0, abs=1e-6) for e in expected)  # forced tokens (the closing <end>)
    assert max(expected) > 0.5


def test_the_entropy_bonus_has_finite_gradients_and_raises_the_entropy():
    """Masked-out tokens have logprob -inf; a gradient through 0 * -inf would be nan everywhere."""
    torch.manual_seed(1)
    model = TinyPolicy(d_model=32, n_layers=1)
    prompts, responses, _ = _sampled(model, 4)
    batch = Responses.build(model, prompts, responses)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    before = float(response_logprobs(model, batch)[1].detach().sum())
    for _ in range(5):
        loss = -response_logprobs(model, batch)[1].sum()
        optimizer.zero_grad()
        loss.backward()
        assert all(torch.isfinite(p.grad).all() for p in model.parameters() if p.grad is not None)
        optimizer.step()
    assert float(response_logprobs(model, batch)[1].detach().sum()) > before
