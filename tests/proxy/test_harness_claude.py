"""Claude Code completes a file task through the proxy (Anthropic Messages, SSE), by path or by API key."""

import json

import pytest

from forge_eval.proxy import read_calls
from tests.proxy._harnesses import binary, claude_args, claude_env, run_harness

pytestmark = pytest.mark.harness

OFFLINE = {
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_ERROR_REPORTING": "1",
}


@pytest.mark.parametrize("keying", ["path", "key"])
def test_claude_code_writes_the_file_through_the_proxy(proxy, scripted, tmp_path, keying):
    claude = binary("claude")
    rollout_id = f"claude-{keying}"
    created = proxy.rollout(
        rollout_id, harness="claude_code", sampling={"temperature": 0.6, "max_tokens": 512}
    )
    if keying == "path":
        base_url, key = proxy.url + created["base_path"], "sk-ant-not-a-rollout-key"
    else:
        base_url, key = proxy.url, created["api_key"]
    work = tmp_path / "work"
    work.mkdir()
    # the key variant also lets Claude Code make its internal title call (another model alias)
    offline = OFFLINE if keying == "path" else {k: v for k, v in OFFLINE.items() if "NONESSENTIAL" not in k}
    env = claude_env(
        tmp_path,
        base_url,
        key,
        ANTHROPIC_SMALL_FAST_MODEL="forge-small",
        ANTHROPIC_DEFAULT_HAIKU_MODEL="forge-small",
        **offline,
    )
    argv = [str(claude), *claude_args()]
    result = run_harness(argv, work, env, timeout=90)
    assert result.returncode == 0, result.stderr[-2000:] + result.stdout[-2000:]
    assert (work / "hello.txt").read_text() == "hi"
    final = json.loads(result.stdout.strip().splitlines()[-1])
    assert final["type"] == "result" and final["subtype"] == "success"

    calls = read_calls(proxy.records, rollout_id)
    assert [c.seq for c in calls] == list(range(len(calls)))
    assert all(c.api == "anthropic_messages" and c.rollout_id == rollout_id for c in calls)
    agent = [c for c in calls if c.served_request.get("tools")]
    assert len(agent) == 2, [c.path for c in calls]
    assert agent[0].stream and agent[0].path.endswith("/v1/messages")
    tool_use = [b for b in agent[0].returned_response["content"] if b["type"] == "tool_use"]
    assert tool_use[0]["name"] == "Bash" and "hello.txt" in tool_use[0]["input"]["command"]
    # the tool result comes back as a tool message answering that tool call
    tool_messages = [m for m in agent[1].served_request["messages"] if m["role"] == "tool"]
    assert tool_messages and tool_messages[-1]["tool_call_id"] == tool_use[0]["id"]
    assert agent[1].returned_response["stop_reason"] == "end_turn"
    assert all(
        c.served_request["temperature"] == 0.6 and c.served_request["max_tokens"] <= 512 for c in calls
    )
    assert agent[0].model_alias == "forge-policy"
    assert agent[0].user_agent.startswith("claude-cli")
    internal = [c for c in calls if not c.served_request.get("tools")]
    if keying == "key":
        assert internal, "Claude Code made no internal (title) call"
        assert all(c.seq < agent[0].seq for c in internal)
        assert {c.model_alias for c in internal} == {"forge-small"}  # the alias tells internal calls apart
    else:
        assert not internal
