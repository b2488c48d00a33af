"""results.json's protocol record as `forge-eval run` fills it: read back from the run's own logs; the
judge block's `comparable` follows the record, not the judge model alone."""

import json

from click.testing import CliRunner

import tests.runner._probe_benchmark  # noqa: F401  (registers the probe benchmarks)
from forge_eval._cli.main import cli
from forge_eval.rundir import ELEMENTS, load_results
from forge_eval.runner import run_benchmark
from tests.reports._tree import parse
from tests.runner._recording_server import recorded_run, recording_server


def test_the_record_holds_what_the_run_used(tmp_path, monkeypatch):
    monkeypatch.setenv("REC_API_KEY", "test")
    with recording_server() as (url, _seen):
        spec = recorded_run(url, tmp_path, quick=True, temperature=0.3, max_tokens=32)
        run_benchmark(spec, display="none")
    protocol = load_results(tmp_path).protocol
    assert protocol is not None and protocol.comparable is False
    used = {e.element: e.ours for e in protocol.elements}
    # --max-tokens over the task's own 64 and --temperature, as Inspect applied them; no seed
    assert used["agent_sampling"].value == {"max_tokens": 32, "temperature": 0.3}
    (sampling,) = protocol.of("agent_sampling")
    note = "temperature 0.3, max_tokens 32: set by this run (its options, or an embedded model's reply cap), "
    assert sampling.note == note + "not by the task"
    assert used["task_set"].value["n"] == 1 and used["task_set"].label == "listed task ids: 1 tasks"
    assert used["harness"].value == "react"
    same = {e.element: e.same for e in protocol.elements}
    assert same == {"task_set": False, "agent_sampling": False, "harness": True}
    assert any(r.startswith("not recorded: agent prompt, judge model") for r in protocol.reasons)
    rows = parse((tmp_path / "report.html").read_text()).find("table", cls="protocol").find_all("tr")
    assert len(rows) == 1 + 3


def test_the_official_judge_model_alone_does_not_make_a_run_comparable(tmp_path, monkeypatch):
    data = tmp_path / "data"
    data.mkdir()
    (data / "tasks.json").write_text(json.dumps([{"id": "a", "input": "What is 6*7?", "target": "42"}]))
    monkeypatch.setenv("INSPECT_DISPLAY", "none")
    with recording_server() as (url, _seen):
        monkeypatch.setenv("REC_BASE_URL", url)
        monkeypatch.setenv("REC_API_KEY", "test")
        args = ["run", "judged-probe", "--seeds", "1", "--epochs", "1", "--model", "openai-api/rec/m"]
        args += ["--model-base-url", url, "--data-dir", str(data), "--out", str(tmp_path / "run")]
        result = CliRunner().invoke(cli, args, standalone_mode=False, catch_exceptions=True)
    assert result.exception is None, result.output
    assert "judge: openai-api/rec/official-judge (the official judge" in result.output
    results = load_results(tmp_path / "run")
    assert results.judge is not None and results.judge.model == "openai-api/rec/official-judge"
    # the judge model is the official one, but nothing says the judge prompt is
    assert results.judge.comparable is False
    assert results.judge.note == (
        "the judge prompts are not recorded as the official ones: "
        "scores are not comparable with published ones"
    )
    assert results.protocol is not None and results.protocol.comparable is False
    (judge_model,) = results.protocol.of("judge_model")
    assert judge_model.same is True
    (sampling,) = results.protocol.of("agent_sampling")  # what the run used, beside "not recorded yet"
    assert sampling.ours.value == {"max_tokens": 64} and sampling.official.kind == "unknown"
    assert len(results.protocol.reasons) == 1  # the pending reason covers the unknown official side
    assert results.protocol.reasons[0].startswith("protocol record not yet filled")
    assert "not comparable with published scores: protocol record not yet filled" in result.output


def test_forgelab_at_its_defaults_is_comparable(tmp_path, monkeypatch):
    monkeypatch.setenv("REC_API_KEY", "test")
    with recording_server() as (url, _seen):
        spec = recorded_run(url, tmp_path, "forgelab")
        run_benchmark(spec, display="none")
    protocol = load_results(tmp_path).protocol
    assert protocol is not None
    assert protocol.reasons == [] and protocol.comparable is True
    assert [e.element for e in protocol.elements] == list(ELEMENTS)
