"""Each real harness solves a forgelab task end to end: `forge-eval run forgelab --harness H` with a scripted
model behind the per-sample proxy; the log holds the harness's calls as ModelEvents, the proxy its records."""

import json
from pathlib import Path

import pytest
from inspect_ai.log import read_eval_log

from forge_eval.harnesses import harness_settings
from forge_eval.proxy import iter_attempts, read_calls, read_rollout
from forge_eval.runner import RunSpec, run_benchmark
from tests.harnesses._policy import COMMAND, TASK_ID, UNREACHABLE

pytestmark = pytest.mark.harness

# (harness, API its calls arrive in, its shell tool)
HARNESS_API = {
    "codex": ("responses", "exec_command"),
    "claude-code": ("anthropic_messages", "Bash"),
    "openclaw": ("chat", "exec"),
}


def _run(harness: str, out: Path, url: str, sandbox: bool = True):
    spec = RunSpec(
        benchmark="forgelab",
        seeds=(3,),
        epochs=1,
        model="openai-api/scripted/scripted-policy",
        model_base_url=f"{url}/v1",
        harness=harness,
        task_options={"task_ids": TASK_ID},
        out=out,
    )
    with harness_settings(records_dir=out / "records", sandbox=sandbox):
        return run_benchmark(spec, display="none")


@pytest.mark.parametrize(
    "harness", ["codex", "claude-code", pytest.param("openclaw", marks=pytest.mark.slow)]
)
def test_harness_solves_a_forgelab_task_through_the_proxy(harness, scripted_model, tmp_path):
    upstream, server = scripted_model
    result = _run(harness, tmp_path, server.url)
    api, shell_tool = HARNESS_API[harness]

    log = read_eval_log(next((tmp_path / "logs").glob("*.eval")).as_posix())
    assert log.status == "success", log.error
    sample = log.samples[0]
    assert sample.scores["forgelab_scorer"].value == 1.0, sample.scores["forgelab_scorer"].explanation
    assert "415 555 0142" in sample.output.completion
    # from inside the sandbox the model server itself is out of reach: only the proxy and the tools are in
    assert UNREACHABLE in sample.output.completion and "MODEL-SERVER-REACHED" not in sample.output.completion
    assert result.results["harness"] == harness and result.results["metrics"]["success_rate"]["estimate"] == 1
    # every harness call is a ModelEvent of the sample: the tool call, then the answer
    events = [e for e in sample.events if e.event == "model"]
    assert len(events) >= 2
    first_calls = [c for e in events for c in (e.output.message.tool_calls or [])]
    assert first_calls[0].function == shell_tool and "forge-tool contacts_search" in json.dumps(
        first_calls[0].arguments
    )
    assert events[0].config.seed == 3  # the run's seed reached the model through the proxy

    # the proxy recorded the same calls on a rollout that names the task and harness
    [(rollout_id, attempt)] = list(iter_attempts(tmp_path / "records"))
    record = read_rollout(tmp_path / "records", rollout_id, attempt)
    assert record.task_id == TASK_ID and record.harness == harness and record.mode == "eval"
    assert (record.seed, record.epoch) == (3, 1)
    assert record.termination == "completed" and record.exit_code == 0
    calls = read_calls(tmp_path / "records", rollout_id, attempt)
    assert len(calls) == len(events) and all(c.api == api for c in calls)
    assert COMMAND in json.dumps(calls[0].returned_response)
