"""The training core against the real recording proxy (in a thread, over its scripted upstream).

The "harness" is a minimal tool-calling loop on the OpenAI SDK that talks to the proxy's data plane with the
rollout's signed key; the proxy's scripted upstream plays the model (one shell call, then an answer) and
emulates vLLM's token ids and logprobs. Everything between harness and trainer is real: keying, records,
control plane, trajectory rebuild, tagging, failure policy and (for the `verl` test) the AgentLoop.
"""

import asyncio

import openai
import pytest

from forge_eval.proxy import HttpProxyControl
from forge_eval.sandbox import RolloutOutcome, RolloutSpec
from forge_eval.training import build_batch, build_trajectory, credit_variant
from forge_eval.training.backends import InProcessTestBackend
from tests.training._agent_loops import forge_agent_loop
from tests.training.conftest import PROXY_ADMIN_KEY

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "bash",
            "parameters": {"type": "object", "properties": {"command": {"type": "string"}}},
        },
    }
]


async def tool_loop(spec: RolloutSpec) -> RolloutOutcome:
    """A two-turn agent: run the model's shell call (pretend), then take its answer."""
    client = openai.AsyncOpenAI(base_url=spec.proxy_base_url + "/v1", api_key=spec.api_key, max_retries=0)
    messages = [
        {"role": "system", "content": "You are a shell agent."},
        {"role": "user", "content": "create hello.txt containing hi"},
    ]
    for _ in range(4):
        reply = await client.chat.completions.create(model="policy", messages=messages, tools=TOOLS)
        message = reply.choices[0].message
        messages.append(message.model_dump(exclude_none=True))
        if not message.tool_calls:
            await client.close()
            return RolloutOutcome(
                "completed",
                0,
                reward=1.0 if "hello.txt" in (message.content or "") else 0.0,
                answer=message.content,
            )
        for call in message.tool_calls:
            messages.append({"role": "tool", "tool_call_id": call.id, "content": ""})
    await client.close()
    return RolloutOutcome("harness_crash", 1)


async def _rollout(control: HttpProxyControl, backend: InProcessTestBackend, url: str, rollout_id: str):
    created = await control.create_rollout({"rollout_id": rollout_id, "group_uid": "g", "harness": "react"})
    spec = RolloutSpec(rollout_id, 0, "react", {}, url + created.base_path, created.api_key, 60)
    handle = await backend.start(spec)
    outcome = await backend.wait(handle, 10**10)
    await control.report(rollout_id, 0, outcome)
    return await control.fetch(rollout_id, 0)


def test_batch_from_proxy_records(proxy_url, proxy_control_url):
    async def main():
        control = HttpProxyControl(proxy_control_url, PROXY_ADMIN_KEY)
        backend = InProcessTestBackend(tool_loop)
        fetched = [await _rollout(control, backend, proxy_url, f"int-{i}") for i in range(2)]
        await control.aclose()
        return fetched

    fetched = asyncio.run(main())
    for record, calls in fetched:
        assert record.termination == "completed" and record.reward == 1.0
        t = build_trajectory(record, calls)
        assert t.roles == ["action", "answer"]
        assert [c.response_ids.tolist() for c in t.calls] == [c.completion_token_ids for c in calls]
    batch = build_batch([build_trajectory(r, c) for r, c in fetched], credit=credit_variant("masked"))
    assert batch.stats.groups_kept == 1 and batch.stats.rows >= 2
    assert all(float(r.advantages[r.response_mask == 1][0]) == 0.0 for r in batch.rows)  # equal rewards


def test_control_errors_are_messages(proxy_control_url):
    from forge_eval._errors import ForgeError

    async def main():
        control = HttpProxyControl(proxy_control_url, "wrong-key")
        try:
            await control.fetch("nope", 0)
        finally:
            await control.aclose()

    with pytest.raises(ForgeError, match=r"refused GET /rollouts/nope \(HTTP 401\)"):
        asyncio.run(main())


@pytest.mark.verl
def test_agent_loop_through_the_real_proxy(proxy_url, proxy_control_url, monkeypatch):
    monkeypatch.setenv("FORGE_PROXY_ADMIN_KEY", PROXY_ADMIN_KEY)
    loop = forge_agent_loop(
        {},
        proxy_url=proxy_url,
        control_url=proxy_control_url,
        backend=InProcessTestBackend(tool_loop),
        credit="terminal",
    )
    row = {"uid": "u1", "extra_info": {"forge_task": '{"task_id": "hello", "harness": "react"}'}}
    outputs = asyncio.run(loop.run({"temperature": 1.0}, **row))
    assert len(outputs) == 1  # terminal: only the answer call learns
    out = outputs[0]
    assert out.reward_score == 1.0 and out.extra_fields["forge_roles"].endswith("answer")
    assert sum(out.response_mask) == len(out.response_ids) > 0
    assert out.response_logprobs[0] == pytest.approx(-0.01)
