"""Role tagging on traffic that real harnesses sent through the recording proxy.

Claude Code 2.1.197, Codex CLI 0.171.0 and OpenClaw 2026.9.6 (installed by scripts/setup.d/30-harnesses.sh)
run the file task against the proxy, whose scripted upstream plays the model. Claude Code runs without
CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC, so it also sends its title-generation call.
"""

import asyncio
import json
from pathlib import Path

import pytest

from forge_eval.proxy import (
    HttpProxyControl,
    ProxyConfig,
    ScriptedPolicy,
    ScriptedUpstream,
    create_app,
    create_control_app,
    serve_in_thread,
)
from forge_eval.sandbox import RolloutOutcome
from forge_eval.training import build_trajectory
from tests.proxy._harnesses import (
    TASK,
    binary,
    claude_args,
    claude_env,
    codex_args,
    isolated_env,
    openclaw_args,
    openclaw_config,
    run_harness,
)
from tests.training.conftest import PROXY_ADMIN_KEY, PROXY_SECRET

pytestmark = pytest.mark.e2e


def _claude(run: Path, base_url: str, key: str) -> tuple[list[str], dict[str, str]]:
    quiet = {"DISABLE_TELEMETRY": "1", "DISABLE_AUTOUPDATER": "1", "DISABLE_ERROR_REPORTING": "1"}
    env = claude_env(run, base_url, key, **quiet)
    argv = [str(binary("claude")), *claude_args()]
    return argv, env


def _codex(run: Path, base_url: str, key: str) -> tuple[list[str], dict[str, str]]:
    (run / "home" / ".codex").mkdir(parents=True)
    env = isolated_env(run, CODEX_HOME=str(run / "home" / ".codex"), FORGE_KEY=key)
    return [str(binary("codex")), *codex_args(f"{base_url}/v1"), TASK], env


def _openclaw(run: Path, base_url: str, key: str) -> tuple[list[str], dict[str, str]]:
    config = run / "openclaw.json"
    config.write_text(json.dumps(openclaw_config(base_url + "/v1", key)))
    home = run / "home"
    env = isolated_env(run, OPENCLAW_HOME=str(home), OPENCLAW_STATE_DIR=str(home / ".openclaw"))
    argv = [str(binary("openclaw")), *openclaw_args(TASK, config, run / "work")]
    return argv, env


@pytest.mark.parametrize(
    ("harness", "command", "roles"),
    [
        ("claude_code", _claude, ["title", "action", "answer"]),
        ("codex", _codex, ["action", "answer"]),
        pytest.param("openclaw", _openclaw, ["action", "answer"], marks=pytest.mark.slow),  # ~25 s, 1.4 GB
    ],
)
def test_real_harness_calls_are_tagged(proxy_url, proxy_control_url, tmp_path, harness, command, roles):
    rollout_id = f"tag-{harness.replace('_', '-')}"

    async def main():
        control = HttpProxyControl(proxy_control_url, PROXY_ADMIN_KEY)
        try:
            created = await control.create_rollout({"rollout_id": rollout_id, "harness": harness})
            argv, env = command(tmp_path, proxy_url + created.base_path, created.api_key)
            (tmp_path / "work").mkdir()
            result = await asyncio.to_thread(run_harness, argv, tmp_path / "work", env, 180)
            assert result.returncode == 0, result.stderr[-2000:]
            await control.report(rollout_id, 0, RolloutOutcome("completed", 0, reward=1.0))
            return await control.fetch(rollout_id, 0)
        finally:
            await control.aclose()

    record, calls = asyncio.run(main())
    assert (tmp_path / "work" / "hello.txt").read_text() == "hi"
    trajectory = build_trajectory(record, calls)
    assert trajectory.roles == roles, [(c.path, c.served_request.get("tools") is not None) for c in calls]
    assert trajectory.stats.n_calls == len(roles)


class DelegateOnce(ScriptedPolicy):
    """The scripted policy, but the first call that offers Claude Code's Agent tool delegates the task."""

    delegated = False

    def respond(self, body: dict) -> dict:
        tools = {(t.get("function") or {}).get("name") for t in body.get("tools") or []}
        if "Agent" in tools and not self.delegated:
            self.delegated = True
            args = {"description": "write the file", "prompt": TASK, "subagent_type": "general-purpose"}
            call = {
                "id": "call_task",
                "type": "function",
                "function": {"name": "Agent", "arguments": json.dumps(args)},
            }
            return {
                "message": {"role": "assistant", "content": None, "tool_calls": [call]},
                "finish_reason": "tool_calls",
            }
        return super().respond(body)


def test_claude_code_agent_tool_subagent_is_tagged(tmp_path):
    with serve_in_thread(ScriptedUpstream(policy=DelegateOnce()).app()) as upstream:
        config = ProxyConfig(records_dir=tmp_path / "records", secret=PROXY_SECRET, upstreams=[upstream.url])
        app = create_app(config)
        with serve_in_thread(app, control=create_control_app(app)) as proxy:

            async def main():
                control = HttpProxyControl(proxy.control_url, str(config.admin_key))
                try:
                    created = await control.create_rollout(
                        {"rollout_id": "cc-task", "harness": "claude_code"}
                    )
                    argv, env = _claude(tmp_path, proxy.url + created.base_path, created.api_key)
                    argv[argv.index("Bash")] = "Bash,Agent"
                    (tmp_path / "work").mkdir()
                    result = await asyncio.to_thread(run_harness, argv, tmp_path / "work", env, 180)
                    assert result.returncode == 0, result.stderr[-2000:]
                    await control.report("cc-task", 0, RolloutOutcome("completed", 0, reward=1.0))
                    return await control.fetch("cc-task", 0)
                finally:
                    await control.aclose()

            record, calls = asyncio.run(main())
    assert (tmp_path / "work" / "hello.txt").read_text() == "hi"
    roles = build_trajectory(record, calls).roles
    assert roles[:2] == ["title", "action"] and roles[-1] == "answer", roles
    assert len(roles) >= 5 and set(roles[2:-1]) == {"subagent"}, roles
