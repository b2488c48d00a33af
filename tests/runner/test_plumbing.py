"""`--judge`, `--data-dir`, the official `--epochs` default and the optional results.json blocks."""

import hashlib
import json

import pytest
from click.testing import CliRunner

import tests.runner._probe_benchmark as probes
from forge_eval._cli.main import cli
from forge_eval._errors import UsageError
from forge_eval.rundir import load_results
from tests.reports._tree import parse
from tests.runner._recording_server import recording_server

TASKS = [
    {"id": "six-times-seven", "input": "What is 6*7?", "target": "42"},
    {"id": "say-42", "input": "Say 42.", "target": "42"},
    {"id": "browse", "input": "Open the live site.", "target": "x", "needs": "live web"},
]


def _invoke(*args: str):
    return CliRunner().invoke(cli, ["run", *args], standalone_mode=False, catch_exceptions=True)


def test_judge_data_dir_and_official_epochs_reach_the_run_and_results(tmp_path, monkeypatch):
    data = tmp_path / "data"
    data.mkdir()
    (data / "tasks.json").write_text(json.dumps(TASKS))
    out = tmp_path / "run"
    # The README example as written: a local openai-api/vllm endpoint without VLLM_API_KEY.
    monkeypatch.delenv("VLLM_API_KEY", raising=False)
    monkeypatch.setenv("INSPECT_DISPLAY", "none")
    with recording_server() as (url, seen):
        monkeypatch.setenv("REC_BASE_URL", url)
        monkeypatch.setenv("REC_API_KEY", "test")
        args = ["judged-probe", "--seeds", "1", "--model", "openai-api/vllm/m", "--model-base-url", url]
        args += ["--judge", "openai-api/rec/judge-m", "--data-dir", str(data), "--out", str(out)]
        result = _invoke(*args)
        assert result.exception is None, result.output
        # another endpoint for the same run is refused, not mixed in
        other = _invoke(*args[:6], url.replace("/v1", "/other/v1"), *args[7:])
    assert "epochs: 2 (the official trial count of judged-probe" in result.output

    judge_calls = [body for body in seen if body["model"] == "judge-m"]
    agent_calls = [body for body in seen if body["model"] == "m"]
    assert len(judge_calls) == len(agent_calls) == 2 * 2  # 2 runnable tasks x 2 official epochs
    assert "Is the answer" in json.dumps(judge_calls[0]["messages"])

    results = load_results(out)
    assert results.epochs == 2 and results.status == "complete"
    assert results.data_dir == str(data.resolve()) and results.model_base_url == url
    assert results.judge is not None
    assert results.judge.model == "openai-api/rec/judge-m" and results.judge.role == "judge"
    assert results.judge.prompt_sha256 == hashlib.sha256(probes.JUDGE_PROMPT.encode()).hexdigest()
    assert results.judge.settings == {"temperature": 0.0}
    assert results.judge.comparable is False and "openai-api/rec/official-judge" in results.judge.note
    assert results.subset is not None
    assert (results.subset.n_total, results.subset.n_run) == (3, 2)
    skipped = [(s.task_id, s.reason) for s in results.subset.skipped]
    assert skipped == [("browse", "needs live web, not available here")]
    assert results.reference is not None
    assert results.reference.scores == {"success_rate": 0.615, "pass^2": 0.5}
    assert results.metrics["success_rate"].n_tasks == 2  # skipped tasks are not scored 0

    doc = parse((out / "report.html").read_text())
    headline = doc.find("table", cls="headline")
    assert [th.text() for th in headline.find("thead").find_all("th")][-1] == "Paper"
    rows = headline.find("tbody").find_all("tr")
    paper = {r.attrs["data-metric"]: r.find("td", cls="paper").text() for r in rows}
    assert paper["success_rate"] == "61.5%" and paper["pass^2"] == "50.0%" and paper["pass@2"] == "–"
    note = doc.find("div", id="protocol-note").text()
    assert "Not comparable with the benchmark's published scores" in note
    assert "judge model differs: official openai-api/rec/official-judge" in note
    assert "2 of 3 tasks ran" in doc.find("p", id="subset-note").text()

    assert isinstance(other.exception, UsageError)
    assert "differs in: model_base_url" in str(other.exception)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["probe", "--judge", "openai/gpt-4.1"], "scores without an LLM judge"),
        (["probe", "--data-dir", "."], "reads no external task data"),
        (["judged-probe", "--data-dir", "/nonexistent/fe"], "--data-dir /nonexistent/fe does not exist"),
        (["probe", "--model", "openai-api/rec/m", "--deterministic"], "is the embedded model's"),
        (
            ["judged-probe", "--judge", "openai/a", "--model-role", "judge=openai/b", "--data-dir", "."],
            "--judge openai/a and --model-role judge=openai/b bind the judge to two models",
        ),
    ],
)
def test_options_a_benchmark_cannot_use_are_refused(tmp_path, args, message):
    result = _invoke(*args, "--out", str(tmp_path / "run"))
    assert isinstance(result.exception, UsageError) and result.exception.exit_code == 2
    assert message in str(result.exception)
    assert not (tmp_path / "run").exists()


def test_a_run_directory_of_an_older_version_resumes(tmp_path):
    from forge_eval.runner import RunSpec
    from forge_eval.runner._execute import _identity, claim_run_dir

    spec = RunSpec(benchmark="probe", seeds=(0,), out=tmp_path, epochs=1, command="forge-eval run probe")
    older = {k: v for k, v in _identity(spec, "react").items() if k not in ("judge", "deterministic")}
    (tmp_path / "run.json").write_text(json.dumps({"identity": older, "seeds": [3]}))
    claim_run_dir(spec, "react")  # keys the older version did not record do not refuse the run
    assert json.loads((tmp_path / "run.json").read_text())["seeds"] == [0, 3]
    with pytest.raises(UsageError, match="differs in: epochs"):
        claim_run_dir(RunSpec(benchmark="probe", seeds=(0,), out=tmp_path, epochs=2), "react")


def test_model_roles_bind_inspect_roles_as_inspects_cli_does(tmp_path, monkeypatch):
    """`--model-role ROLE=MODEL` binds any role the benchmark's code calls (Claw-Eval's `user`); the judge
    role given that way is the judge; each role gets its own Inspect model bound to that role."""
    from types import SimpleNamespace

    from forge_eval._cli._options import parse_model_roles
    from forge_eval.runner import RunSpec, plan_run
    from forge_eval.runner._execute import _identity, serve_roles

    roles = parse_model_roles(("user=openai-api/rec/user-m", "judge=openai-api/rec/judge-m"))
    monkeypatch.setenv("REC_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("REC_API_KEY", "test")
    spec = RunSpec(
        benchmark="judged-probe", seeds=(0,), out=tmp_path / "run", data_dir=tmp_path, model_roles=roles
    )
    (tmp_path / "tasks.json").write_text(json.dumps(TASKS))
    plan = plan_run(spec)
    assert plan.spec.judge == "openai-api/rec/judge-m"
    assert plan.spec.model_roles == {"user": "openai-api/rec/user-m"}
    assert _identity(plan.spec, "react")["model_roles"] == {"user": "openai-api/rec/user-m"}
    bound = serve_roles(plan, SimpleNamespace(embedded=False), None)
    assert bound == {"user": "openai-api/rec/user-m", "judge": "openai-api/rec/judge-m"}
    with pytest.raises(Exception, match="expected one model name"):
        parse_model_roles(("user=a/b,c/d",))
