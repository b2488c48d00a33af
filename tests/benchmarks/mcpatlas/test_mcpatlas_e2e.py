"""MCP-Atlas end to end with the real MCP servers (cli-mcp-server, calculator over stdio), a scripted
agent and a scripted judge (Inspect's mockllm: no model can answer deterministically here).

The tasks, upstream's loop and judge code and the seeded data all come from the pinned upstream tree
(`--data-dir` its root; /data is `services/agent-environment/data` of the tree by default).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.model import ModelOutput, get_model

from forge_eval.benchmarks import BENCHMARKS, NothingRunnableError
from forge_eval.benchmarks.mcpatlas import SERVERS, mcpatlas
from tests.benchmarks.forgelab._oracle import USAGE

TASK = "6888e207a34beb25cfedda3b"  # barber shop: cli-mcp-server + calculator
servers_installed = pytest.mark.skipif(
    not all(SERVERS.get(s).executable().exists() for s in ("cli-mcp-server", "calculator")),
    reason="MCP servers not installed: run scripts/setup.d/45-mcp-servers.sh",
)


def _scripted(outputs: list[ModelOutput]) -> list[ModelOutput]:
    for output in outputs:
        output.usage = USAGE  # mockllm would count tokens with tiktoken, which downloads a file
    return outputs


def test_without_seeded_data_every_task_is_skipped_with_each_servers_reason(mcpatlas_data: Path) -> None:
    bench = BENCHMARKS.get("mcpatlas")
    skipped = bench.skipped(mcpatlas_data)
    assert len(skipped) == 10
    assert "cli-mcp-server: reads the files seeded" in skipped[TASK]
    assert "mcp-code-executor: its pinned npm package" in skipped["689bd255c0422b257e7dfcc5"]
    assert "wikipedia: needs the live web (offline here)" in skipped["688ba1b3e95696e72dd93e8d"]
    with pytest.raises(NothingRunnableError) as raised:
        bench.load(mcpatlas_data)
    message = str(raised.value)
    assert "none of the 10 chosen mcpatlas tasks can run here" in message and raised.value.exit_code == 2
    assert all(task_id in message for task_id in skipped)


@servers_installed
def test_seeded_task_runs_on_real_servers_and_is_scored_per_claim(
    upstream_trees: Path, tmp_path: Path
) -> None:
    root = upstream_trees / "scaleapi+mcp-atlas@b290e67"
    bench = BENCHMARKS.get("mcpatlas")
    assert TASK not in bench.skipped(root) and [s.id for s in bench.load(root)] == [TASK]
    agent = get_model(
        "mockllm/model",
        custom_outputs=_scripted([
            ModelOutput.for_tool_call("mockllm/model", "cli-mcp-server_show_security_rules", {}),
            ModelOutput.for_tool_call(
                "mockllm/model", "cli-mcp-server_run_command", {"command": "cat 'Barber Shop.csv'"}
            ),
            ModelOutput.for_tool_call("mockllm/model", "calculator_calculate", {"expression": "(4+4.5)/2"}),
            ModelOutput.from_content("mockllm/model", "Average rating 4.25; average age 32.5."),
        ]),
    )
    verdicts = [{"coverage_outcome": "partially_fulfilled"}, {"coverage_outcome": "fulfilled"}]
    replies = [ModelOutput.from_content("mockllm/model", json.dumps(v)) for v in verdicts]
    judge = get_model("mockllm/model", custom_outputs=_scripted(replies))
    [log] = inspect_eval(
        mcpatlas(data_dir=str(root)),
        model=agent,
        model_roles={"judge": judge},
        log_dir=str(tmp_path / "logs"),
        display="none",
    )
    assert log.status == "success", log.error
    [sample] = log.samples or []
    results = [m for m in sample.messages if m.role == "tool"]
    assert [m.function for m in results] == [
        "cli-mcp-server_show_security_rules",
        "cli-mcp-server_run_command",
        "calculator_calculate",
    ]
    assert all(m.error is None for m in results)
    assert "Male,42,1,Haircut,$15.00,4,4" in results[1].text  # the tree's seeded file, read by the server
    assert results[2].text.strip() == "4.25"  # computed by the real calculator
    offered = {t.name for e in sample.events if e.event == "model" for t in e.tools}
    assert {"cli-mcp-server_run_command", "calculator_calculate"} <= offered
    score = sample.scores["atlas_scorer"]
    assert score.value == 0.75  # (0.5 + 1) / 2 claims
    assert score.metadata["passed"] is True
    assert score.answer == "Average rating 4.25; average age 32.5."
    assert any(t.startswith("notion_") for t in score.metadata["left_out_tools"])
    assert not any(t.startswith(("notion_", "lara-translate_")) for t in offered)


def test_cli_run_with_no_runnable_task_stops_before_creating_the_run(
    mcpatlas_data: Path, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    forge = Path(sys.executable).with_name("forge-eval")
    command = [str(forge), "run", "mcpatlas", "--data-dir", str(mcpatlas_data), "--judge", "qwen-0.5b"]
    command += ["--out", str(out)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert done.returncode == 2, done.stderr[-2000:]  # nothing runnable here: exit 2, as every benchmark
    assert "none of the 10 chosen mcpatlas tasks can run here" in done.stderr
    assert all(task_id in done.stderr for task_id in BENCHMARKS.get("mcpatlas").skipped(mcpatlas_data))
    assert not out.exists()  # nothing scored, no run directory left behind
