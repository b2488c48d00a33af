"""A harness matrix of forgelab: react and a real harness (Codex CLI) on the same tasks and seeds, each in
its own run directory, compared in one results.json and report.

The first test drives both through the CLI with the scripted policy, as one shard set per harness on the
`local` executor (fast); the second with the real embedded model, in this process (slow: the model
generates on CPU)."""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from forge_eval._cli.main import cli
from forge_eval.analysis import load_run, read_run_transcripts
from forge_eval.runner import RunSpec, execute_matrix, plan_matrix
from tests.harnesses._policy import TASK_ID

pytestmark = pytest.mark.harness

HARNESSES = ("react", "codex")


def _check_matrix(out: Path, seeds: tuple[int, ...]) -> dict:
    """What every matrix run leaves: a run directory per harness, the baseline's results plus the section."""
    results = json.loads((out / "results.json").read_text())
    assert results["harness"] == "react" and results["log_dir"] == "harnesses/react/logs"
    matrix = results["harnesses"]
    assert matrix["baseline"] == "react" and matrix["order"] == list(HARNESSES)
    for name in HARNESSES:
        own = json.loads((out / "harnesses" / name / "results.json").read_text())
        assert own["harness"] == name and "harnesses" not in own  # a single-harness run's schema
        run = matrix["runs"][name]
        assert run["run_dir"] == f"harnesses/{name}"
        assert run["metrics"]["success_rate"] == own["metrics"]["success_rate"]
        assert run["usage"]["mean_per_task"]["calls"] >= 1
        assert run["usage"]["mean_per_task"]["total_tokens"] > 0
        assert set(run["capabilities"]) >= {"error_recovery", "self_verification", "tool_coverage"}
    [pair] = matrix["pairs"]
    assert (pair["a"], pair["b"]) == HARNESSES and pair["direction"] == "codex minus react"
    assert pair["metrics"]["success_rate"]["n_paired"] == len(seeds)  # one task x each seed
    budgets = pair["step_budgets"]
    assert budgets and all(b["difference"]["n_paired"] == len(seeds) for b in budgets)
    assert pair["usage"]["calls"]["n_paired"] == len(seeds)
    # `forge-eval compare` and `analyze` read the matrix directory as its baseline run
    assert set(load_run(out).trials["seed"]) == set(seeds)
    assert set(read_run_transcripts(out).rollouts["harness"]) == {"react"}
    report = (out / "report.html").read_text()
    assert 'id="harness-matrix"' in report and 'data-pair="react-codex"' in report
    return matrix


def test_matrix_on_a_cluster_runs_a_shard_set_per_harness(scripted_model, tmp_path):
    _, server = scripted_model
    model = ["--model", "openai-api/scripted/scripted-policy", "--model-base-url", f"{server.url}/v1"]
    args = ["run", "forgelab", "--harness", ",".join(HARNESSES), "--seeds", "2", "--seed-base", "1"]
    args += ["--epochs", "1", *model, "-T", f"task_ids={TASK_ID}", "--cluster", "local", "--shards", "2"]
    result = CliRunner().invoke(cli, [*args, "--out", str(tmp_path)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "harness matrix · baseline react" in result.output
    assert "codex minus react (paired, 95% CI):" in result.output
    matrix = _check_matrix(tmp_path, (1, 2))
    for name in HARNESSES:
        shards = json.loads((tmp_path / "harnesses" / name / "shards.json").read_text())
        assert sorted(shards) == ["seed1-1of1", "seed2-1of1"]
        assert {s["harness"] for s in shards.values()} == {name}
        assert matrix["runs"][name]["metrics"]["success_rate"]["estimate"] == 1.0
    assert matrix["pairs"][0]["metrics"]["success_rate"]["estimate"] == 0.0


@pytest.mark.e2e
@pytest.mark.slow
def test_matrix_with_the_embedded_model(tmp_path):
    spec = RunSpec(
        benchmark="forgelab",
        seeds=(0,),
        epochs=1,
        task_options={"task_ids": TASK_ID, "max_tokens": 256, "time_limit": 1500},
        out=tmp_path,
    )
    result = execute_matrix(plan_matrix(spec, HARNESSES), display="none")
    assert result.results["harnesses"]["order"] == list(HARNESSES)
    _check_matrix(tmp_path, (0,))
