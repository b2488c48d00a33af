"""The tiny policy's sampler and trainer: the batched sampler against one call at a time, the batched
scorer against the sampler, the entropy bonus.

The scorer recomputes, for a whole update at once, the constrained distribution the sampler drew each
token from; the references here are a forward of one row at a time with the grammar's allowed tokens
read off by hand, and the entropy's definition, summed by hand.
"""

import json
import math

import pytest

torch = pytest.importorskip("torch", reason="torch is installed by scripts/setup.d/40-verl.sh (CI does)")

from forge_eval.training.ablation._harness import MAIN_SYSTEM, SET_TOOL  # noqa: E402
from forge_eval.training.ablation._model import (  # noqa: E402
    Responses,
    TinyPolicy,
    Turn,
    response_logprobs,
    sample,
)
from forge_eval.training.ablation._tokens import WORD_GRAMMAR  # noqa: E402


def _turns(n: int, temperature: float = 1.0) -> list[Turn]:
    """Prompts of different lengths (one or two goal targets), half of them with a required call."""
    turns = []
    for k in range(n):
        goal = "goal a 1" if k % 3 == 0 else f"goal a {k % 3 + 1} c {k % 2 + 1}"
        messages = [{"role": "system", "content": MAIN_SYSTEM}, {"role": "user", "content": goal}]
        prompt = WORD_GRAMMAR.render_prompt(messages, [SET_TOOL], "required" if k % 2 else None)
        turns.append(Turn(prompt, temperature, seed=k))
    return turns


def _sampled(model: TinyPolicy, n: int) -> tuple[list[list[int]], list[list[int]], list[list[float]]]:
    turns = _turns(n)
    answers = sample(model, turns)
    return [list(t.prompt) for t in turns], [a[0] for a in answers], [a[1] for a in answers]


def test_a_batch_samples_what_each_call_samples_alone():
    """Rows of different lengths share one forward per token (padding inside the rows, masked): each
    row gets the tokens and logprobs it gets alone, in any batch order, greedy or sampled."""
    torch.manual_seed(0)
    model = TinyPolicy(d_model=32, n_layers=2)
    for temperature in (1.0, 0.0):
        turns = _turns(7, temperature)
        assert len({len(t.prompt) for t in turns}) > 1
        batched = sample(model, turns)
        alone = [sample(model, [t])[0] for t in turns]
        reversed_batch = sample(model, turns[::-1])[::-1]
        for (ids, lps), (ids1, lps1), (ids2, _) in zip(batched, alone, reversed_batch, strict=True):
            assert ids == ids1 == ids2
            assert lps == pytest.approx(lps1, abs=1e-5)
    assert len({tuple(ids) for ids, _ in sample(model, _turns(7))}) > 1  # sampling does vary


def test_the_batched_scorer_gives_the_samplers_logprobs_and_the_entropy_of_its_distributions():
    torch.manual_seed(0)
    model = TinyPolicy(d_model=32, n_layers=1)
    prompts, responses, logprobs = _sampled(model, 6)
    assert len({len(r) for r in responses}) > 1  # rows of different lengths share one padded forward
    batch = Responses.build(model, prompts, responses)
    logp, entropy = response_logprobs(model, batch)
    tokens = list(zip(batch.row.tolist(), batch.offset.tolist(), strict=True))  # flat order: by bucket
    assert sorted(tokens) == [(b, i) for b, r in enumerate(responses) for i in range(len(r))]
    sampled = [logprobs[b][i] for b, i in tokens]
    assert torch.allclose(logp.detach(), torch.tensor(sampled), atol=1e-5)
    by_token = {}
    with torch.no_grad():
        for b, (prompt, response) in enumerate(zip(prompts, responses, strict=True)):
            h, _ = model.hidden(torch.tensor([prompt + response]))
            for i in range(len(response)):
                allowed = sorted(WORD_GRAMMAR.allowed(prompt, response[:i]))
                lp = torch.log_softmax(h[0, len(prompt) - 1 + i] @ model.unembedding[allowed].T, dim=-1)
                by_token[b, i] = -sum(math.exp(x) * x for x in lp.tolist())
    expected = [by_token[t] for t in tokens]
    assert torch.allclose(entropy.detach(), torch.tensor(expected), atol=1e-5)
    assert any(e == pytest.approx(0.0, abs=1e-6) for e in expected)  # forced tokens (the closing <end>)
    assert max(expected) > 0.5


def test_a_merged_row_scores_each_of_its_calls_as_sampled_and_rows_of_other_lengths_too():
    """A chain of two `set` calls as one row (the second call's prompt extends the first's prompt and
    response with the tool result), scored by segment, beside a shorter row in another bucket."""
    torch.manual_seed(2)
    model = TinyPolicy(d_model=32, n_layers=2)
    messages = [{"role": "system", "content": MAIN_SYSTEM}, {"role": "user", "content": "goal a 1 c 2"}]
    first = WORD_GRAMMAR.render_prompt(messages, [SET_TOOL], "required")
    [(ids1, lps1)] = sample(model, [Turn(first, 1.0, seed=1)])
    _, [(name, args)] = WORD_GRAMMAR.parse(ids1)
    call = {"id": "c", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
    messages += [{"role": "assistant", "tool_calls": [call]}, {"role": "tool", "content": "ok"}]
    second = WORD_GRAMMAR.render_prompt(messages, [SET_TOOL], "required")
    assert second[: len(first) + len(ids1)] == first + ids1
    [(ids2, lps2)] = sample(model, [Turn(second, 1.0, seed=2)])
    gap = second[len(first) + len(ids1) :]
    short = WORD_GRAMMAR.render_prompt(messages[:2], [SET_TOOL], None)[:8]
    [(ids3, lps3)] = sample(model, [Turn(short, 1.0, seed=3)])
    batch = Responses.build(
        model,
        [first, short],
        [ids1 + gap + ids2, ids3],
        [[(0, len(ids1)), (len(ids1) + len(gap), len(ids2))], [(0, len(ids3))]],
    )
    assert len(batch.buckets) == 2  # 8 tokens and ~45 share no padded forward
    logp, _ = response_logprobs(model, batch)
    expected = {(0, i): lp for i, lp in enumerate(lps1)}
    expected |= {(0, len(ids1) + len(gap) + i): lp for i, lp in enumerate(lps2)}
    expected |= {(1, i): lp for i, lp in enumerate(lps3)}
    tokens = list(zip(batch.row.tolist(), batch.offset.tolist(), strict=True))
    assert sorted(tokens) == sorted(expected)  # the tool result between the calls is not scored
    assert torch.allclose(logp.detach(), torch.tensor([expected[t] for t in tokens]), atol=1e-5)


def test_the_entropy_bonus_has_finite_gradients_and_raises_the_entropy():
    """Masked-out tokens have logprob -inf; a gradient through 0 * -inf would be nan everywhere."""
    torch.manual_seed(1)
    model = TinyPolicy(d_model=32, n_layers=1)
    with torch.no_grad():  # peaked distributions: at initialisation they are all but uniform already
        model.tokens.weight.mul_(50)
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
