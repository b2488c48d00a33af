"""`--harness a,b`: bad harness lists are refused before anything is created, and a single-harness run's
results.json keeps its schema (no `harnesses` key)."""

import json

import pytest
from click.testing import CliRunner

from forge_eval._cli.main import cli
from forge_eval._errors import UnknownNameError, UsageError
from forge_eval.rundir import RunResults, write_results

_RESULTS = {
    "benchmark": "forgelab",
    "model": "m",
    "harness": "react",
    "seeds": [0],
    "epochs": 1,
    "status": "complete",
    "metrics": {},
}


@pytest.mark.parametrize(
    ("harnesses", "error", "message"),
    [
        ("react,nope", UnknownNameError, "unknown harness 'nope'. Valid harnesses: "),
        ("react,react", UsageError, "names react more than once"),
        ("react,", UsageError, "has an empty name"),
    ],
)
def test_bad_harness_list_is_refused_and_nothing_is_created(tmp_path, harnesses, error, message):
    out = tmp_path / "matrix"
    result = CliRunner().invoke(
        cli,
        ["run", "forgelab", "--harness", harnesses, "--seeds", "2", "--out", str(out)],
        standalone_mode=False,
        catch_exceptions=True,
    )
    assert isinstance(result.exception, error), result.exception
    assert result.exception.exit_code == 2 and message in str(result.exception)
    if error is UnknownNameError:
        assert {"react", "codex", "claude-code", "openclaw"} <= set(result.exception.valid)
    assert list(tmp_path.iterdir()) == []


def test_single_harness_results_have_no_harnesses_key(tmp_path):
    results = RunResults.model_validate(_RESULTS)
    write_results(tmp_path, results)
    written = json.loads((tmp_path / "results.json").read_text())
    assert "harnesses" not in written and "harnesses" not in json.loads(results.model_dump_json())
    assert set(written) == set(RunResults.model_fields) - {"harnesses"}
