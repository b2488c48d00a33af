"""A run's results.json and report carry its cost over every attempt, its noise floor and coverage, and
its behavior section, with no other command."""

import json

import pytest

import tests.runner._probe_benchmark  # noqa: F401  (registers the "probe" benchmark)
from forge_eval.rundir import USAGE_LEDGER
from forge_eval.runner import RunSpec, run_benchmark
from tests.runner._recording_server import recording_server

_TOKENS = 5  # the recording server reports 5 prompt and 5 completion tokens per answered call


def test_cost_is_carried_across_retries_and_a_resume_and_the_report_has_every_section(tmp_path, monkeypatch):
    monkeypatch.setenv("REC_API_KEY", "test")
    failing = ["Say 42."]  # the "forty-two" task fails until the test lifts the failure
    with recording_server(failing) as (url, seen):
        spec = RunSpec(
            "probe", seeds=(0, 1), epochs=1, model="openai-api/rec/m", model_base_url=url, out=tmp_path
        )
        first = run_benchmark(spec, display="none").results
        answered = len(seen)
        failing.clear()
        second = run_benchmark(spec, display="none").results
    assert first["status"] == "partial" and second["status"] == "complete"
    before, after = first["cost"]["total"], second["cost"]["total"]
    # the first invocation's errored attempts were retried (and their logs removed): still counted
    assert before["n_attempts"] > before["n_trials"] == 6 and before["n_retried"] > 0
    # the resume adds exactly what it sent: the attempts carried into its logs are not counted again
    assert after["completion_tokens"] - before["completion_tokens"] == _TOKENS * (len(seen) - answered)
    assert after["n_attempts"] - before["n_attempts"] == len(seen) - answered
    # every attempt sent one call, the failed ones too: more calls than the 6 surviving trials made
    assert after["calls"] == after["n_attempts"] > 6 and after["prompt_tokens"] == after["completion_tokens"]
    assert set(second["cost"]["per_harness"]) == {"react"}
    assert len(list((tmp_path / "logs").glob("*.eval"))) == 2 and (tmp_path / "logs" / USAGE_LEDGER).is_file()

    coverage = first["coverage"]
    assert coverage["attempted"] == 6 and coverage["scored"] < 6
    assert any(f["error"] == "ModelGenerateError" for f in coverage["infrastructure_failures"])
    assert second["coverage"]["coverage"] == 1.0
    floor = second["noise_floor"]
    # the recording server answers the same way under every seed: no flips, no spread
    assert floor["n_seeds"] == 2 and floor["flip_rate"] == 0.0 and floor["mdd"] == 0.0
    assert json.loads((tmp_path / "results.json").read_text())["noise_floor"] == floor

    report = (tmp_path / "report.html").read_text()
    for anchor in ("noise-floor", "cost", "behavior"):
        assert f'id="{anchor}"' in report, anchor
    assert (tmp_path / "behavior.json").is_file()
    assert "0.0 pp" in report and "retried" in report


@pytest.mark.parametrize("seeds", [(0,)])
def test_a_one_seed_run_says_it_has_no_noise_floor(tmp_path, monkeypatch, seeds):
    monkeypatch.setenv("REC_API_KEY", "test")
    with recording_server() as (url, _seen):
        spec = RunSpec(
            "probe", seeds=seeds, epochs=1, model="openai-api/rec/m", model_base_url=url, out=tmp_path
        )
        results = run_benchmark(spec, display="none").results
    assert results["noise_floor"]["mdd"] is None and "--seeds 2" in results["noise_floor"]["note"]
    assert "--seeds 2" in (tmp_path / "report.html").read_text()
