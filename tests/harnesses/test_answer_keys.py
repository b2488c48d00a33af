"""An agent must never win without solving the task: a Codex agent on forgelab that greps the benchmark's
answer key (`grep -r answer: <checkout>/benchmarks/forgelab/tasks.yaml`) instead of calling the contacts
tool finds nothing from its sandbox, so the answer it gives holds no phone number and scores 0."""

from collections.abc import Iterator
from pathlib import Path

import pytest
from inspect_ai.log import read_eval_log

from forge_eval.harnesses import harness_settings
from forge_eval.proxy import ScriptedUpstream, ServerThread, serve_in_thread
from forge_eval.runner import RunSpec, run_benchmark
from tests.harnesses._policy import TASK_ID, ForgeToolPolicy

pytestmark = pytest.mark.harness

ANSWER_KEY = Path(__file__).resolve().parents[2] / "benchmarks" / "forgelab" / "tasks.yaml"
PHONE = "415 555 0142"  # the contacts-phone task's check


@pytest.fixture
def answer_key_grepper(monkeypatch: pytest.MonkeyPatch) -> Iterator[ServerThread]:
    """A scripted model whose one shell command reads the answer key; it then answers with what it read."""
    policy = ForgeToolPolicy(command=f"grep -r answer: {ANSWER_KEY}; echo grep-exit=$?")
    monkeypatch.setenv("SCRIPTED_API_KEY", "unused")
    with serve_in_thread(ScriptedUpstream(policy=policy).app()) as server:
        yield server


def test_grepping_the_answer_key_from_the_sandbox_finds_nothing(answer_key_grepper, tmp_path):  # noqa: ANN001
    assert PHONE in ANSWER_KEY.read_text()  # on the host, the key holds the answer
    spec = RunSpec(
        benchmark="forgelab",
        seeds=(1,),
        epochs=1,
        model="openai-api/scripted/scripted-policy",
        model_base_url=f"{answer_key_grepper.url}/v1",
        harness="codex",
        task_options={"task_ids": TASK_ID},
        out=tmp_path,
    )
    with harness_settings(records_dir=tmp_path / "records"):
        run_benchmark(spec, display="none")
    log = read_eval_log(next((tmp_path / "logs").glob("*.eval")).as_posix())
    assert log.status == "success", log.error
    sample = log.samples[0]
    completion = sample.output.completion
    assert "grep-exit=2" in completion  # the command ran in the sandbox, and grep found no such file
    assert "answer:" not in completion and PHONE not in completion
    assert sample.scores["forgelab_scorer"].value == 0.0
