"""Role tagging on traffic that real harnesses sent through the recording proxy.

Claude Code 2.1.197 and Codex CLI 0.171.0 (installed by scripts/setup.d/30-harnesses.sh) run the file
task against the proxy, whose scripted upstream plays the model. Claude Code runs without
CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC, so it also sends its title-generation call.
"""

import asyncio
from pathlib import Path

import pytest

from forge_eval.training import build_trajectory
from forge_eval.training._proxy_control import HttpProxyControl
from forge_eval.training.backends import RolloutOutcome
from tests.proxy._harnesses import TASK, binary, isolated_env, run_harness
from tests.training.conftest import PROXY_SECRET

pytestmark = pytest.mark.e2e


def _claude(run: Path, base_url: str, key: str) -> tuple[list[str], dict[str, str]]:
    env = isolated_env(
        run,
        CLAUDE_CONFIG_DIR=str(run / "home" / ".claude"),
        ANTHROPIC_BASE_URL=base_url,
        ANTHROPIC_API_KEY=key,
        DISABLE_TELEMETRY="1",
        DISABLE_AUTOUPDATER="1",
        DISABLE_ERROR_REPORTING="1",
    )
    argv = [
        str(binary("claude")),
        "-p",
        TASK,
        "--output-format",
        "stream-json",
        "--verbose",
        "--permission-mode",
        "acceptEdits",
        "--allowedTools",
        "Bash",
        "--model",
        "forge-policy",
    ]
    return argv, env


def _codex(run: Path, base_url: str, key: str) -> tuple[list[str], dict[str, str]]:
    (run / "home" / ".codex").mkdir(parents=True)
    env = isolated_env(run, CODEX_HOME=str(run / "home" / ".codex"), FORGE_KEY=key)
    settings = [
        "analytics.enabled=false",
        "check_for_update_on_startup=false",
        "model=forge-policy",
        "model_provider=forge",
        "model_providers.forge.name=Forge",
        f'model_providers.forge.base_url="{base_url}/v1"',
        "model_providers.forge.env_key=FORGE_KEY",
        "model_providers.forge.wire_api=responses",
        "model_providers.forge.stream_max_retries=0",
        "model_providers.forge.request_max_retries=0",
    ]
    argv = [
        str(binary("codex")),
        "exec",
        "--skip-git-repo-check",
        "--json",
        "--dangerously-bypass-approvals-and-sandbox",
    ]
    for feature in ("plugins", "remote_plugin", "apps", "tool_suggest"):
        argv += ["--disable", feature]
    for setting in settings:
        argv += ["-c", setting]
    return [*argv, TASK], env


@pytest.mark.parametrize(
    ("harness", "command", "roles"),
    [("claude_code", _claude, ["title", "action", "answer"]), ("codex", _codex, ["action", "answer"])],
)
def test_real_harness_calls_are_tagged(proxy_url, tmp_path, harness, command, roles):
    rollout_id = f"tag-{harness.replace('_', '-')}"

    async def main():
        control = HttpProxyControl(proxy_url, PROXY_SECRET)
        try:
            created = await control.create_rollout({"rollout_id": rollout_id, "harness": harness})
            argv, env = command(tmp_path, proxy_url + created.base_path, created.api_key)
            (tmp_path / "work").mkdir()
            result = await asyncio.to_thread(run_harness, argv, tmp_path / "work", env, 120)
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
