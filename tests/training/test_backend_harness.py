"""Real harnesses as training rollouts: a forgelab task exported with `task_rows`, run by
`ForgeProxyAgentLoop` as training/configs/agent_loops.yaml instantiates it (`backend: local`), the REAL
harness (Codex, Claude Code, OpenClaw binaries; react as its Inspect program) in its bubblewrap sandbox,
the real recording proxy, and a scripted upstream model (the only stand-in: the embedded model is too slow
for a test's time budget here). The benchmark sets the task's world and tools up, the harness's
`rollout_command` launches on them, forgelab's own checks grade it, and the records become training
outputs."""

import asyncio
import json
from pathlib import Path

import pytest

from forge_eval._errors import ForgeError, UsageError
from forge_eval.benchmarks.forgelab import select_tasks
from forge_eval.proxy import (
    ProxyConfig,
    ScriptedUpstream,
    ServerThread,
    create_app,
    create_control_app,
    iter_attempts,
    read_calls,
    read_rollout,
    serve_in_thread,
)
from forge_eval.sandbox import RolloutSpec
from forge_eval.training.backends import LocalBackend
from forge_eval.training.rollouts import default_program
from tests.harnesses._policy import COMMAND, TASK_ID, UNREACHABLE, ForgeToolPolicy, probe_command
from tests.sandbox._sandboxes import needs_bwrap
from tests.training._agent_loops import agent_loop_entry, instantiate_agent_loop
from tests.training.conftest import PROXY_ADMIN_KEY, PROXY_SECRET

pytestmark = [needs_bwrap, pytest.mark.harness]


def _loop(proxy: ServerThread, monkeypatch: pytest.MonkeyPatch):  # noqa: ANN202
    """The agent loop exactly as veRL builds it from agent_loops.yaml, pointed at this test's proxy."""
    monkeypatch.setenv("FORGE_PROXY_ADMIN_KEY", PROXY_ADMIN_KEY)
    entry = agent_loop_entry()
    entry.proxy_url, entry.control_url, entry.deadline_s = proxy.url, proxy.control_url, 120
    return instantiate_agent_loop(entry)


@pytest.mark.verl
@pytest.mark.slow
@pytest.mark.parametrize("harness", ["codex", "claude-code", "openclaw", "react"])
def test_forgelab_task_as_a_training_rollout(harness: str, tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    from forge_eval.training.verl import task_rows

    policy = ForgeToolPolicy()
    records = tmp_path / "records"
    with serve_in_thread(ScriptedUpstream(policy=policy).app()) as upstream:
        # the model's shell call also tries the upstream itself: from the sandbox only the proxy is in reach
        policy.command = probe_command(f"{upstream.url}/v1/models")
        config = ProxyConfig(
            records_dir=records, secret=PROXY_SECRET, admin_key=PROXY_ADMIN_KEY, upstreams=[upstream.url]
        )
        app = create_app(config)
        proxy = ServerThread(app, control=create_control_app(app)).start()
        try:
            loop = _loop(proxy, monkeypatch)
            assert isinstance(loop.backend, LocalBackend)
            loop.backend.root_dir = tmp_path / "rollouts"
            [row] = task_rows("forgelab", select_tasks(task_ids=TASK_ID).samples, harness=harness)
            outputs = asyncio.run(loop.run({"temperature": 1.0}, uid="g1", **row))
        finally:
            proxy.stop()

    [(rollout_id, attempt)] = list(iter_attempts(records))
    record = read_rollout(records, rollout_id, attempt)
    assert (record.task_id, record.harness, record.group_uid) == (TASK_ID, harness, "g1")
    assert record.termination == "completed" and record.exit_code == 0
    # forgelab's own checks graded it: the answer quotes the phone number the tool returned in the sandbox
    assert record.reward == 1.0, record
    assert "415 555 0142" in record.answer and "MODEL-SERVER-REACHED" not in record.answer
    calls = read_calls(records, rollout_id, attempt)
    first = json.dumps(calls[0].returned_response)
    assert len(calls) >= 2
    if harness == "react":  # Inspect's loop calls the task's tools natively, through the tool bridge
        assert "contacts_search" in first and "submit" in json.dumps(calls[-1].returned_response)
    else:
        assert COMMAND in first and UNREACHABLE in record.answer
    # training outputs: token rows carrying the verifier's reward
    assert outputs and {o.reward_score for o in outputs} == {1.0}
    assert all(len(o.response_ids) == len(o.response_mask) > 0 for o in outputs)
    assert not list((tmp_path / "rollouts").glob("*/*")), "the rollout's work dir was not cleaned up"


def test_task_without_a_benchmark_is_a_clear_error(tmp_path: Path) -> None:
    def spec(task: dict) -> RolloutSpec:
        return RolloutSpec("r", 0, "codex", {"task_id": "x", **task}, "http://h:9", "k", 5)

    with pytest.raises(UsageError, match="has no benchmark"):
        asyncio.run(default_program(spec({}), tmp_path))
    with pytest.raises(ForgeError, match="no rollout_environment"):
        asyncio.run(default_program(spec({"benchmark": "claweval"}), tmp_path))
