"""A real harness with the real embedded model: `forge-eval run forgelab --harness claude-code` offline.

Slow (the embedded model generates on CPU). The task's time limit is raised to 25 min: on a 2-core
machine shared with four other model servers (load average 16) no first call finished within forgelab's
own 10 min; there the harness run took 282 s for one model call (Claude Code `--bare`).
The 0.5B model is not expected to solve the task; the test checks the pipeline: the harness ran in its
sandbox in lean mode (`--bare`), every call it made is a ModelEvent of the sample and a proxy record, and
the run was scored.
"""

import json

import pytest
from inspect_ai.log import read_eval_log

from forge_eval.proxy import iter_attempts, read_calls, read_rollout
from forge_eval.runner import RunSpec, run_benchmark
from tests.harnesses._policy import TASK_ID

pytestmark = [pytest.mark.harness, pytest.mark.e2e, pytest.mark.slow]


def test_claude_code_with_the_embedded_model(tmp_path):
    spec = RunSpec(
        benchmark="forgelab",
        seeds=(0,),
        epochs=1,
        harness="claude-code",
        task_options={"task_ids": TASK_ID, "max_tokens": 256, "time_limit": 1500},
        out=tmp_path,
    )
    result = run_benchmark(spec, display="none")
    assert result.results["harness"] == "claude-code" and result.results["n_tasks"] == 1

    log = read_eval_log(next((tmp_path / "logs").glob("*.eval")).as_posix())
    assert log.status == "success", log.error
    sample = log.samples[0]
    assert "forgelab_scorer" in sample.scores
    [info] = [e.data for e in sample.events if e.event == "info" and e.source == "claude-code"]
    assert info["lean"] is True and info["sandboxed"] is True
    events = [e for e in sample.events if e.event == "model"]
    assert events and all(e.config.seed == 0 for e in events)
    # --bare: Bash, Edit and Read only
    assert {t.name for t in events[0].tools} <= {"Bash", "Edit", "Read"}

    [(rollout_id, attempt)] = list(iter_attempts(tmp_path / "records"))
    record = read_rollout(tmp_path / "records", rollout_id, attempt)
    assert (record.task_id, record.seed, record.epoch, record.harness) == (TASK_ID, 0, 1, "claude-code")
    assert record.termination in ("completed", "harness_crash")
    calls = read_calls(tmp_path / "records", rollout_id, attempt)
    assert len(calls) == len(events)
    # the prompt tells the model how to call the task's tools from the shell
    prompt = json.dumps(calls[0].served_request["messages"])
    assert "forge-tool NAME key=value" in prompt and "- contacts_search query:" in prompt
