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


def _run(seed: int, curve: list[float], tasks: int = 10) -> dict:
    """A finished run whose held-out success is `curve[k]` on every task at checkpoint k."""
    evals = [
        {"step": 20 * k, "success": v, "reward": v, "per_task": {f"t{i}": v for i in range(tasks)}}
        for k, v in enumerate(curve)
    ]
    train = [{"step": s, "reward": 0.5, "internal_entropy": 1.0} for s in range(20 * (len(curve) - 1))]
    return {"config": {"seed": seed}, "eval": evals, "train": train, "seconds_per_step": 1.0}


def test_the_verdict_tells_pairs_apart_at_the_end_or_only_over_the_learning_curve():
    from forge_eval.training.ablation._summary import summarize

    curves = {"never": [0, 0, 0, 0], "late": [0, 0, 0, 1], "early": [0, 1, 1, 1]}
    data = summarize({v: [_run(s, c) for s in (0, 1)] for v, c in curves.items()}, n_resamples=200)
    never_late, never_early, late_early = data["verdict"]["pairs"]
    assert never_late.startswith("late beats never on held-out success (late - never: +100.0 points")
    assert never_early.startswith("early beats never")
    # level at the end (both 100%), but early's area under the curve is 100% vs late's 33%
    assert late_early.startswith("late and early end level on held-out success (early - late: +0.0 points")
    assert "but early learned sooner" in late_early and "+66.7 points" in late_early
    assert data["verdict"]["headline"] == "The data can tell 3 of 3 pairs of variants apart."
    same = summarize({v: [_run(s, [0, 1, 1, 1]) for s in (0, 1)] for v in ("a", "b")}, n_resamples=200)
    assert same["verdict"]["headline"] == "The data cannot tell the variants apart at this scale."
    assert "cannot be told apart" in same["verdict"]["pairs"][0]
