"""OpenClaw (Node 24) completes a file task through the proxy (chat completions, SSE). Slow: ~25 s a run."""

import json

import pytest

from forge_eval.training.proxy import read_calls
from tests.proxy._harnesses import TASK, binary, isolated_env, run_harness

pytestmark = [pytest.mark.harness, pytest.mark.slow]


def _config(base_url: str, key: str) -> dict:
    model = {
        "id": "forge-policy",
        "name": "Forge",
        "reasoning": False,
        "input": ["text"],
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
        "contextWindow": 128000,
        "maxTokens": 4096,
    }
    provider = {"baseUrl": base_url, "apiKey": key, "api": "openai-completions", "models": [model]}
    return {
        "models": {"mode": "replace", "providers": {"forge": provider}},
        "agents": {"defaults": {"model": {"primary": "forge/forge-policy"}}},
    }


@pytest.mark.parametrize("keying", ["path", "key"])
def test_openclaw_writes_the_file_through_the_proxy(proxy, scripted, tmp_path, keying):
    openclaw = binary("openclaw")
    rollout_id = f"openclaw-{keying}"
    created = proxy.rollout(rollout_id, harness="openclaw")
    if keying == "path":
        base_url, key = f"{proxy.url}{created['base_path']}/v1", "dummy"
    else:
        base_url, key = f"{proxy.url}/v1", created["api_key"]
    work = tmp_path / "work"
    work.mkdir()
    config = tmp_path / "openclaw.json"
    config.write_text(json.dumps(_config(base_url, key)))
    home = tmp_path / "home"
    env = isolated_env(tmp_path, OPENCLAW_HOME=str(home), OPENCLAW_STATE_DIR=str(home / ".openclaw"))
    argv = [
        str(openclaw),
        "agent",
        "exec",
        TASK,
        "--config",
        str(config),
        "--model",
        "forge/forge-policy",
        "--cwd",
        str(work),
        "--json",
        "--timeout",
        "120",
    ]
    result = run_harness(argv, work, env, timeout=150)
    assert result.returncode == 0, result.stderr[-3000:] + result.stdout[-3000:]
    assert (work / "hello.txt").read_text() == "hi"
    summary = json.loads(result.stdout[result.stdout.index("{") :])
    assert summary["ok"] is True and summary["toolSummary"]["tools"] == ["exec"]

    calls = read_calls(proxy.records, rollout_id)
    assert [c.seq for c in calls] == [0, 1]
    assert all(c.api == "chat" and c.stream and c.rollout_id == rollout_id for c in calls)
    call = calls[0].returned_response["choices"][0]["message"]["tool_calls"][0]
    assert call["function"]["name"] == "exec"
    assert calls[1].served_request["messages"][-1]["role"] in ("tool", "user")
    assert any(m["role"] == "tool" for m in calls[1].served_request["messages"])
    assert calls[1].finish_reason == "stop"
    assert calls[0].original_request["stream_options"]["include_usage"] is True
