"""`forge-eval ablate credit --replay`: the variants' token and advantage shares on real harness traffic.

Claude Code 2.1.197 and Codex CLI 0.171.0 (scripts/setup.d/30-harnesses.sh) run through the recording
proxy, whose scripted upstream plays the model; the verifier checks the file they leave. Two rollouts per
harness form one GRPO group: one asked for the checked content (reward 1), one for other content (reward 0),
so the group has an advantage to split. Claude Code also sends its title call: a harness-internal call.
"""

import asyncio
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from forge_eval._cli.main import cli
from forge_eval.proxy import (
    HttpProxyControl,
    ProxyConfig,
    ScriptedUpstream,
    create_app,
    create_control_app,
    serve_in_thread,
)
from forge_eval.sandbox import RolloutOutcome
from forge_eval.training.ablation import replay
from tests.proxy._harnesses import binary, claude_args, claude_env, codex_args, isolated_env, run_harness

pytestmark = pytest.mark.e2e


def _claude(run: Path, base_url: str, key: str, task: str) -> tuple[list[str], dict[str, str]]:
    quiet = {"DISABLE_TELEMETRY": "1", "DISABLE_AUTOUPDATER": "1", "DISABLE_ERROR_REPORTING": "1"}
    env = claude_env(run, base_url, key, **quiet)
    return [str(binary("claude")), *claude_args(task)], env


def _codex(run: Path, base_url: str, key: str, task: str) -> tuple[list[str], dict[str, str]]:
    (run / "home" / ".codex").mkdir(parents=True)
    env = isolated_env(run, CODEX_HOME=str(run / "home" / ".codex"), FORGE_KEY=key)
    return [str(binary("codex")), *codex_args(f"{base_url}/v1"), task], env


@pytest.fixture(scope="module")
def records(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Proxy records of 2 Claude Code and 2 Codex rollouts, with the verifier's rewards."""
    root = tmp_path_factory.mktemp("replay")
    with serve_in_thread(ScriptedUpstream().app()) as upstream:
        config = ProxyConfig(records_dir=root / "records", secret="replay-secret", upstreams=[upstream.url])
        app = create_app(config)
        with serve_in_thread(app, control=create_control_app(app)) as proxy:

            async def rollout(harness: str, command, index: int, content: str) -> None:
                control = HttpProxyControl(proxy.control_url, str(config.admin_key))
                run = root / f"{harness}-{index}"
                rollout_id = f"{harness.replace('_', '-')}-{index}"
                try:
                    fields = {"rollout_id": rollout_id, "harness": harness, "group_uid": f"{harness}-hello"}
                    created = await control.create_rollout(fields)
                    task = f"create hello.txt containing {content}"
                    argv, env = command(run, proxy.url + created.base_path, created.api_key, task)
                    (run / "work").mkdir(parents=True)
                    result = await asyncio.to_thread(run_harness, argv, run / "work", env, 180)
                    assert result.returncode == 0, result.stderr[-2000:]
                    written = run / "work" / "hello.txt"
                    reward = float(written.exists() and written.read_text() == "hi")  # the verifier
                    await control.report(rollout_id, 0, RolloutOutcome("completed", 0, reward=reward))
                finally:
                    await control.aclose()

            for harness, command in (("claude_code", _claude), ("codex", _codex)):
                for index, content in enumerate(("hi", "ho")):
                    asyncio.run(rollout(harness, command, index, content))
    return root / "records"


def test_replay_splits_tokens_and_advantage_by_role(records):
    data = replay(records, n_resamples=500)
    claude, codex = data["harnesses"]["claude_code"], data["harnesses"]["codex"]
    assert claude["n_rollouts"] == 2 and codex["n_rollouts"] == 2
    assert claude["calls_per_role"]["title"] == 2  # Claude Code's internal title call, once per rollout
    broadcast, masked, terminal = (claude["variants"][v] for v in ("broadcast", "masked", "terminal"))
    # Eq. (1) trains the title call too; masked and terminal never do
    assert broadcast["token_share"]["title"]["estimate"] > 0
    assert broadcast["trainable_fraction"]["estimate"] == 1.0
    assert masked["token_share"]["title"]["estimate"] == 0
    assert terminal["token_share"]["answer"]["estimate"] == 1.0
    assert masked["trainable_fraction"]["estimate"] < 1.0
    for harness in (claude, codex):
        for shares in harness["variants"].values():
            assert shares["n_rollouts_with_advantage"] == 2  # rewards 1 and 0 in one group
            total = sum(s["estimate"] or 0 for s in shares["advantage_share"].values())
            assert total == pytest.approx(1.0)
            for s in shares["token_share"].values():
                if s["ci_low"] is not None:
                    assert s["ci_low"] <= s["estimate"] <= s["ci_high"]
    # with gamma = 1 every call of a rollout has the same |advantage|: masses follow the token shares
    # of the rollouts that carry an advantage (here: all of them)
    for role in data["roles"]:
        assert broadcast["advantage_share"][role]["estimate"] == pytest.approx(
            broadcast["token_share"][role]["estimate"] or 0.0
        )


def test_replay_cli_writes_json_and_report(records, tmp_path):
    out = tmp_path / "replay"
    result = CliRunner().invoke(
        cli, ["ablate", "credit", "--replay", str(records), "--out", str(out), "--resamples", "200"]
    )
    assert result.exit_code == 0, result.output
    assert "claude_code: 2 rollouts" in result.output
    assert json.loads((out / "replay.json").read_text())["kind"] == "credit-replay"
    report = (out / "report.html").read_text()
    assert "Replay: claude_code" in report and "Replay: codex" in report and "advantage mass" in report


def test_replay_of_a_directory_without_records_is_a_usage_error(tmp_path):
    result = CliRunner().invoke(
        cli, ["ablate", "credit", "--replay", str(tmp_path), "--out", str(tmp_path / "o")]
    )
    assert getattr(result.exception, "exit_code", None) == 2 and "no rollout records" in str(result.exception)
