"""Codex CLI completes a file task through the proxy (Responses API, SSE), keyed by path or by API key."""

import json
from pathlib import Path

import pytest

from forge_eval.proxy import read_calls
from tests.proxy._harnesses import TASK, binary, codex_args, isolated_env, run_harness

pytestmark = pytest.mark.harness


def _codex(proxy, run: Path, base_url: str, key: str, model: str = "forge-policy"):
    codex = binary("codex")
    work = run / "work"
    work.mkdir(parents=True)
    env = isolated_env(run, CODEX_HOME=str(run / "home" / ".codex"), FORGE_KEY=key)
    (run / "home" / ".codex").mkdir(parents=True)
    argv = [str(codex), *codex_args(base_url, model=model), TASK]
    result = run_harness(argv, work, env, timeout=90)
    return result, work


@pytest.mark.parametrize("keying", ["path", "key"])
def test_codex_writes_the_file_through_the_proxy(proxy, scripted, tmp_path, keying):
    created = proxy.rollout(f"codex-{keying}", harness="codex", sampling={"temperature": 0.7})
    if keying == "path":
        base_url, key = f"{proxy.url}{created['base_path']}/v1", "not-a-rollout-key"
    else:
        base_url, key = f"{proxy.url}/v1", created["api_key"]
    result, work = _codex(proxy, tmp_path, base_url, key)
    assert result.returncode == 0, result.stderr[-2000:] + result.stdout[-2000:]
    assert (work / "hello.txt").read_text() == "hi"

    calls = read_calls(proxy.records, f"codex-{keying}")
    assert [c.seq for c in calls] == [0, 1]
    assert all(c.api == "responses" and c.stream and c.rollout_id == f"codex-{keying}" for c in calls)
    assert calls[0].path == (f"{created['base_path']}/v1/responses" if keying == "path" else "/v1/responses")
    first_output = calls[0].returned_response["output"]
    assert [item["type"] for item in first_output] == ["function_call"]
    assert first_output[0]["name"] == "exec_command"
    assert "hello.txt" in json.loads(first_output[0]["arguments"])["cmd"]
    # the second call carries the tool's result back, and the policy answers
    kinds = [item.get("type") for item in calls[1].original_request["input"]]
    assert "function_call_output" in kinds
    assert calls[1].finish_reason == "stop"
    assert calls[1].returned_response["output"][0]["content"][0]["text"].startswith("Done")
    # developer role served as system; the harness sampling is recorded, the pinned one served
    assert calls[0].served_request["messages"][0]["role"] == "system"
    assert calls[0].served_request["temperature"] == 0.7
    assert calls[0].model_alias == "forge-policy"
    assert calls[0].user_agent and calls[0].user_agent.startswith("codex")
    assert calls[0].completion_token_ids and calls[0].completion_logprobs


def test_codex_apply_patch_is_a_custom_tool_round_trip(proxy, scripted, tmp_path):
    """With a known model slug Codex offers `apply_patch` as a freeform (custom) tool."""
    created = proxy.rollout("codex-patch", harness="codex")
    scripted.policy.patch_tool = "apply_patch"
    try:
        result, work = _codex(proxy, tmp_path, f"{proxy.url}{created['base_path']}/v1", "k", model="gpt-5.5")
    finally:
        scripted.policy.patch_tool = None
    assert result.returncode == 0, result.stderr[-2000:] + result.stdout[-2000:]
    assert (work / "hello.txt").read_text().strip() == "hi"
    first, second = read_calls(proxy.records, "codex-patch")
    custom = [t for t in first.original_request["tools"] if t.get("type") == "custom"]
    assert [t["name"] for t in custom] == ["apply_patch"]
    item = first.returned_response["output"][0]
    assert item["type"] == "custom_tool_call" and item["input"].startswith("*** Begin Patch")
    outputs = [i for i in second.original_request["input"] if i.get("type") == "custom_tool_call_output"]
    assert outputs and outputs[0]["call_id"] == item["call_id"]
    served_call = second.served_request["messages"][-2]["tool_calls"][0]
    assert json.loads(served_call["function"]["arguments"]) == {"input": item["input"]}
