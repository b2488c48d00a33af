"""A harness matrix's cost: per harness (react, and Codex CLI through the proxy) and in total, read from
each harness's usage ledgers, which on a cluster are written per shard."""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from forge_eval._cli.main import cli
from forge_eval.analysis import COST_COLUMNS
from forge_eval.rundir import USAGE_LEDGER, read_usage_ledger
from tests.harnesses._policy import TASK_ID

pytestmark = pytest.mark.harness

HARNESSES = ("react", "codex")


def test_a_matrix_states_each_harness_cost_and_the_total(scripted_model, tmp_path: Path) -> None:
    _, server = scripted_model
    model = ["--model", "openai-api/scripted/scripted-policy", "--model-base-url", f"{server.url}/v1"]
    args = ["run", "forgelab", "--harness", ",".join(HARNESSES), "--seeds", "2", "--epochs", "1", *model]
    args += ["-T", f"task_ids={TASK_ID}", "--cluster", "local", "--shards", "2", "--out", str(tmp_path)]
    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    cost = json.loads((tmp_path / "results.json").read_text())["cost"]
    assert set(cost["per_harness"]) == set(HARNESSES)
    for name in HARNESSES:
        run = tmp_path / "harnesses" / name
        own = json.loads((run / "results.json").read_text())["cost"]
        assert own["per_harness"][name] == cost["per_harness"][name] == own["total"]
        assert own["total"]["n_trials"] == 2 and own["total"]["calls"] >= 2
        assert own["total"]["prompt_tokens"] > 0 and own["total"]["completion_tokens"] > 0
        # the merged ledger holds the attempts of both shards (one seed each)
        assert (run / "logs" / USAGE_LEDGER).is_file()
        assert {row["seed"] for row in read_usage_ledger(run / "logs").values()} == {0, 1}
        report = (run / "report.html").read_text()
        assert 'id="cost"' in report and 'id="behavior"' in report and 'id="noise-floor"' in report
    for column in COST_COLUMNS:
        parts = sum(cost["per_harness"][name][column] for name in HARNESSES)
        assert cost["total"][column] == pytest.approx(parts), column
    matrix_report = (tmp_path / "report.html").read_text()
    assert matrix_report.count("attempts, ") == 3  # a row per harness and the total
