"""What a harness sends reaches the upstream unchanged and is recorded as served: Claw-Eval's `extra_body`
(`reasoning: {effort: high}`), OpenClaw-style sampling and reasoning fields; only the rollout's pins win."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import openai
from inspect_ai.model import get_model

from forge_eval.proxy import InspectUpstream, ScriptedUpstream, read_calls
from tests.proxy.conftest import Proxy

TASK = [{"role": "user", "content": "create hello.txt containing hi"}]
#: What Claw-Eval's provider adds (`extra_body` of its model config) and OpenClaw-style fields.
EXTRA = {"reasoning": {"effort": "high"}, "chat_template_kwargs": {"enable_thinking": True}}
HARNESS_FIELDS = {"reasoning_effort": "high", "parallel_tool_calls": False, "top_k": 20, "min_p": 0.05}


def _call(base_url: str) -> None:
    client = openai.OpenAI(base_url=base_url, api_key="unused")
    client.chat.completions.create(
        model="m", messages=TASK, temperature=0.6, top_p=0.95, extra_body={**EXTRA, **HARNESS_FIELDS}
    )


def test_harness_fields_reach_a_recording_upstream_unchanged(
    proxy: Proxy, scripted: ScriptedUpstream
) -> None:
    created = proxy.rollout("pass", sampling={"temperature": 0.2})
    _call(proxy.url + created["base_path"] + "/v1")
    (served,) = scripted.requests
    sent = {**EXTRA, **HARNESS_FIELDS, "top_p": 0.95}
    assert {k: served.get(k) for k in sent} == sent
    assert served["temperature"] == 0.2  # the rollout's pin wins over the harness's 0.6
    (call,) = read_calls(proxy.records, "pass")
    assert {k: call.served_request.get(k) for k in sent} == sent  # the record is the request served


def test_through_an_inspect_model_the_fields_reach_its_endpoint(
    make_proxy: Callable[..., Proxy], upstream: tuple[ScriptedUpstream, Any], scripted: ScriptedUpstream
) -> None:
    model = get_model("openai-api/scripted/m", base_url=upstream[1].url + "/v1", api_key="unused")
    proxy = make_proxy(upstream_object=InspectUpstream(model))
    created = proxy.rollout("inspect")
    _call(proxy.url + created["base_path"] + "/v1")
    (served,) = scripted.requests
    assert served["reasoning"] == EXTRA["reasoning"]
    assert served["chat_template_kwargs"] == EXTRA["chat_template_kwargs"]
    assert (served["temperature"], served["top_p"], served["min_p"]) == (0.6, 0.95, 0.05)
    (call,) = read_calls(proxy.records, "inspect")
    assert call.served_request["reasoning"] == EXTRA["reasoning"]
