"""OpenClaw (Node 24) completes a file task through the proxy, once per API mode. Slow: ~25-40 s a run.

The path-keyed run speaks chat completions, the key-keyed run Anthropic Messages (no `?beta`), both SSE.
"""

import json

import pytest

from forge_eval.proxy import read_calls
from tests.proxy._harnesses import TASK, binary, isolated_env, openclaw_args, openclaw_config, run_harness

pytestmark = [pytest.mark.harness, pytest.mark.slow]


def _tool_call(call) -> tuple[str, dict]:
    """(name, arguments) of the first tool call a record returned, whatever its API."""
    if call.api == "chat":
        function = call.returned_response["choices"][0]["message"]["tool_calls"][0]["function"]
        return function["name"], json.loads(function["arguments"])
    block = next(b for b in call.returned_response["content"] if b["type"] == "tool_use")
    return block["name"], block["input"]


@pytest.mark.parametrize(("keying", "api"), [("path", "openai-completions"), ("key", "anthropic-messages")])
def test_openclaw_writes_the_file_through_the_proxy(proxy, scripted, tmp_path, keying, api):
    openclaw = binary("openclaw")
    rollout_id = f"openclaw-{keying}"
    created = proxy.rollout(rollout_id, harness="openclaw")
    root = proxy.url + (created["base_path"] if keying == "path" else "")
    key = "dummy" if keying == "path" else created["api_key"]
    base_url = root + "/v1" if api == "openai-completions" else root  # the Anthropic client adds /v1
    work = tmp_path / "work"
    work.mkdir()
    config = tmp_path / "openclaw.json"
    config.write_text(json.dumps(openclaw_config(base_url, key, api)))
    home = tmp_path / "home"
    env = isolated_env(tmp_path, OPENCLAW_HOME=str(home), OPENCLAW_STATE_DIR=str(home / ".openclaw"))
    argv = [str(openclaw), *openclaw_args(TASK, config, work)]
    result = run_harness(argv, work, env, timeout=150)
    assert result.returncode == 0, result.stderr[-3000:] + result.stdout[-3000:]
    assert (work / "hello.txt").read_text() == "hi"
    summary = json.loads(result.stdout[result.stdout.index("{") :])
    assert summary["ok"] is True and summary["toolSummary"]["tools"] == ["exec"]

    calls = read_calls(proxy.records, rollout_id)
    expected_api = "chat" if api == "openai-completions" else "anthropic_messages"
    assert [c.seq for c in calls] == [0, 1]
    assert all(c.api == expected_api and c.stream and c.rollout_id == rollout_id for c in calls)
    name, arguments = _tool_call(calls[0])
    assert name == "exec" and "hello.txt" in arguments["command"]
    assert any(m["role"] == "tool" for m in calls[1].served_request["messages"])
    assert calls[1].finish_reason == "stop"
    if api == "openai-completions":
        assert calls[0].original_request["stream_options"]["include_usage"] is True
    else:
        assert calls[0].path == "/v1/messages" and calls[0].original_request["system"]
