"""Token fidelity through the real proxy: ids a router drops, and a chat template that rewrites history."""

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import jinja2
import openai
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from forge_eval._errors import ForgeError
from forge_eval.proxy import ScriptedUpstream, ServerThread, read_calls, read_rollout, serve_in_thread
from forge_eval.training import build_batch, build_trajectory, credit_variant
from forge_eval.training.fidelity import records_fidelity, rollout_fidelity

TASK = "create hello.txt containing hi"


def _router(upstream_url: str) -> Starlette:
    """A gateway in front of the engine that passes answers on without `prompt_token_ids`."""

    async def chat(request: Request) -> Response:
        async with httpx.AsyncClient() as client:
            answer = await client.post(upstream_url + "/chat/completions", content=await request.body())
        body = answer.json()
        body.pop("prompt_token_ids", None)
        return JSONResponse(body, status_code=answer.status_code)

    return Starlette(routes=[Route("/v1/chat/completions", chat, methods=["POST"])])


@pytest.fixture
def router(upstream: tuple[ScriptedUpstream, ServerThread]) -> Iterator[str]:
    with serve_in_thread(_router(upstream[1].url + "/v1")) as server:
        yield server.url + "/v1"


def _episode(proxy, rollout_id: str) -> None:
    """A two-call episode of the scripted policy (tool call, then answer), rewarded 1."""
    created = proxy.rollout(rollout_id, group_uid="g", task_id="hello", harness="react")
    client = openai.OpenAI(base_url=proxy.url + created["base_path"] + "/v1", api_key="unused", max_retries=0)
    tools = [
        {
            "type": "function",
            "function": {
                "name": "bash",
                "parameters": {"type": "object", "properties": {"command": {"type": "string"}}},
            },
        }
    ]
    messages: list = [{"role": "user", "content": TASK}]
    first = client.chat.completions.create(model="policy", messages=messages, tools=tools)
    call = first.choices[0].message.tool_calls[0]
    messages += [
        first.choices[0].message.model_dump(exclude_none=True),
        {"role": "tool", "tool_call_id": call.id, "content": ""},
    ]
    client.chat.completions.create(model="policy", messages=messages, tools=tools)
    _finish(proxy, rollout_id)


def _finish(proxy, rollout_id: str) -> None:
    """The harness exited and the verifier gave reward 1."""
    status = {"status": "exited", "exit_code": 0}
    assert proxy.admin("POST", f"/rollouts/{rollout_id}/status", json=status).is_success
    assert proxy.admin("POST", f"/rollouts/{rollout_id}/reward", json={"reward": 1.0}).is_success


def _trajectory(records: Path, rollout_id: str):
    return build_trajectory(read_rollout(records, rollout_id), read_calls(records, rollout_id))


def test_a_router_that_strips_prompt_token_ids_fails_loudly(make_proxy, scripted, router, tmp_path):
    direct, routed = make_proxy(), make_proxy([router])
    _episode(direct, "kept")
    _episode(routed, "stripped")
    kept, stripped = _trajectory(direct.records, "kept"), _trajectory(routed.records, "stripped")
    assert all(c.prompt_token_ids is None for c in read_calls(routed.records, "stripped"))

    fidelity = rollout_fidelity(stripped)
    assert (fidelity.calls, fidelity.without_ids, fidelity.unverified_rollouts) == (2, 2, 1)
    assert rollout_fidelity(kept).without_ids == 0
    credit = credit_variant("broadcast")
    with pytest.raises(ForgeError, match="token ids"):  # nothing verifiable: an error, not an empty batch
        build_batch([stripped], credit=credit)
    batch = build_batch([kept, stripped], credit=credit, singletons="raw")
    assert batch.stats.unverified_rollouts == 1 and batch.stats.merge.unverified == 2
    assert {row.rollout_id for row in batch.rows} == {"kept"}  # masked, not re-tokenized
    recorded = {c.call_id: c for c in read_calls(direct.records, "kept")}
    for row in batch.rows:  # the engine's ids as recorded
        first = recorded[row.call_ids[0]]
        assert row.prompt_ids.tolist() == first.prompt_token_ids
        assert row.response_ids[: len(first.completion_token_ids)].tolist() == first.completion_token_ids

    cli = subprocess.run(
        [sys.executable, "-m", "forge_eval._cli.main", "proxy", "stats", str(routed.records), "--rollouts"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert cli.returncode == 0, cli.stderr
    assert (
        "stripped/0" in cli.stdout and "1 rollout(s) have calls without the engine's token ids" in cli.stderr
    )
    harness_line = cli.stdout.splitlines()[-1].split()
    assert harness_line[:5] == ["react", "1", "1", "2", "2"]  # rollouts, unverified, calls, no ids


def test_proxy_stats_refuses_a_directory_without_records(tmp_path):
    for target, message in ((tmp_path / "none", "no records directory"), (tmp_path, "holds no rollout")):
        cli = subprocess.run(
            [sys.executable, "-m", "forge_eval._cli.main", "proxy", "stats", str(target)],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert cli.returncode == 2 and message in cli.stderr and "Traceback" not in cli.stderr


# ChatML as Qwen3's template renders it, reduced to what matters here: an assistant turn of the history
# keeps only what follows its `</think>` (Qwen3 drops earlier reasoning), or is rendered verbatim.
_TEMPLATE = jinja2.Template(
    "{% for m in messages %}<|im_start|>{{ m.role }}\n"
    "{% if m.role == 'assistant' and drop_think %}{{ m.content.split('</think>')[-1].lstrip('\n') }}"
    "{% else %}{{ m.content }}{% endif %}<|im_end|>\n{% endfor %}<|im_start|>assistant\n",
    keep_trailing_newline=True,
)


def _thinking_engine(drop_think: bool) -> Starlette:
    """An engine that reasons before answering, renders with `_TEMPLATE` and returns byte-level ids."""

    async def chat(request: Request) -> Response:
        body = await request.json()
        prompt = _TEMPLATE.render(messages=body["messages"], drop_think=drop_think)
        turn = sum(m["role"] == "assistant" for m in body["messages"])
        content = f"<think>\nstep {turn}\n</think>\n\nanswer {turn}"
        completion = list((content + "<|im_end|>").encode())
        choice = {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
        choice |= {"token_ids": completion, "logprobs": {"content": [{"logprob": -0.1}] * len(completion)}}
        usage = {"prompt_tokens": len(prompt), "completion_tokens": len(completion)}
        answer = {"id": "x", "object": "chat.completion", "model": "m", "choices": [choice], "usage": usage}
        return JSONResponse(answer | {"prompt_token_ids": list(prompt.encode())})

    return Starlette(routes=[Route("/v1/chat/completions", chat, methods=["POST"])])


@pytest.mark.parametrize("drop_think", [True, False], ids=["qwen3-drops-think", "verbatim"])
def test_a_template_that_rewrites_history_shows_as_merge_breaks(make_proxy, drop_think):
    with serve_in_thread(_thinking_engine(drop_think)) as engine:
        proxy = make_proxy([engine.url + "/v1"])
        created = proxy.rollout("think", harness="react")
        client = openai.OpenAI(
            base_url=proxy.url + created["base_path"] + "/v1", api_key="unused", max_retries=0
        )
        messages: list = []
        for question in ("first?", "second?", "third?"):
            messages.append({"role": "user", "content": question})
            answer = client.chat.completions.create(model="m", messages=messages)
            messages.append({"role": "assistant", "content": answer.choices[0].message.content})
        _finish(proxy, "think")
    trajectory = _trajectory(proxy.records, "think")
    fidelity = rollout_fidelity(trajectory)
    calls = read_calls(proxy.records, "think")
    rows = build_batch([trajectory], credit=credit_variant("broadcast"), singletons="raw").rows

    if drop_think:
        assert (fidelity.checked, fidelity.exact, dict(fidelity.breaks)) == (2, 0, {"template": 2})
        assert trajectory.stats.breaks == 2 and trajectory.stats.n_chains == 3
        # each chain is one call exactly as the engine saw and sampled it: no re-rendered history is
        # spliced onto sampled tokens
        assert [(r.prompt_ids.tolist(), r.response_ids.tolist()) for r in rows] == [
            (c.prompt_token_ids, c.completion_token_ids) for c in calls
        ]
    else:
        assert (fidelity.checked, fidelity.exact, sum(fidelity.breaks.values())) == (2, 2, 0)
        (row,) = rows
        last = calls[-1]
        assert row.prompt_ids.tolist() + row.response_ids.tolist() == (
            last.prompt_token_ids + last.completion_token_ids
        )
    assert [f for _, _, f in records_fidelity(proxy.records)][0].exact == fidelity.exact
