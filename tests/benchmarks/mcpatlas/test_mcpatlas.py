"""MCP-Atlas: loader on the shared sample (CSV and parquet), the 89-task rule, the pass line."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from forge_eval._errors import ForgeError
from forge_eval.benchmarks.mcpatlas import (
    AtlasTask,
    load_file,
    paper_subset,
    parse_row,
    passed,
    task_file,
    trajectory_servers,
)
from forge_eval.benchmarks.mcpatlas.__main__ import main as status_main


def test_sample_csv_loads_all_10_tasks_and_all_pass_the_paper_rule(mcpatlas_data: Path) -> None:
    tasks = load_file(task_file(mcpatlas_data))
    assert len(tasks) == 10 and len({t.task_id for t in tasks}) == 10
    assert all(10 <= len(t.enabled_tools) <= 25 for t in tasks)
    assert all(2 <= len(json.loads(t.gtfa_claims)) <= 7 for t in tasks)
    first = next(t for t in tasks if t.task_id == "688ba1b3e95696e72dd93e8d")
    assert trajectory_servers(first) == {"wikipedia", "osm-mcp-server"}
    assert "Frank Gehry was born in Toronto." in first.gtfa_claims  # split by upstream's code when scored
    assert len(paper_subset(tasks)) == 10  # benchmarks.md: all 10 sample tasks pass the rule


def test_parquet_gives_the_same_tasks(mcpatlas_data: Path, tmp_path: Path) -> None:
    csv_tasks = load_file(task_file(mcpatlas_data))
    frame = pd.read_csv(task_file(mcpatlas_data))
    frame["ENABLED_TOOLS"] = frame["ENABLED_TOOLS"].map(json.loads)  # parquet holds decoded lists
    (tmp_path / "data").mkdir()
    path = tmp_path / "data" / "tasks.parquet"
    frame.to_parquet(path)
    assert load_file(task_file(path)) == csv_tasks
    assert task_file(tmp_path) == path  # the dataset folder, as downloaded: --data-dir is a folder


def _task(tools: list[str]) -> AtlasTask:
    row = {
        "TASK": "t",
        "ENABLED_TOOLS": "[]",
        "PROMPT": "p",
        "GTFA_CLAIMS": '["a claim here"]',
        "TRAJECTORY": json.dumps(
            [{"role": "assistant", "tool_calls": [{"function": {"name": n}} for n in tools]}]
        ),
    }
    return parse_row(row, "test")


def test_paper_rule_renames_and_key_gated_servers() -> None:
    assert paper_subset([_task(["calculator_calculate", "wikipedia_search_wikipedia"])])
    assert not paper_subset([_task(["brave_brave_web_search"])])  # brave-search needs a key
    assert trajectory_servers(_task(["MongoDB_find"])) == {"mongodb"}
    assert not paper_subset([_task(["notion_API-post-search", "calculator_calculate"])])


def test_bad_rows_name_the_field() -> None:
    with pytest.raises(ForgeError, match="missing column"):
        parse_row({"TASK": "t"}, "f.csv row 2")
    row = {
        "TASK": "t",
        "ENABLED_TOOLS": "[not json",
        "PROMPT": "p",
        "TRAJECTORY": "[]",
        "GTFA_CLAIMS": '["x y z w"]',
    }
    with pytest.raises(ForgeError, match="field 'ENABLED_TOOLS': not valid JSON"):
        parse_row(row, "f.csv row 2")


def test_pass_line() -> None:
    assert passed(0.75) and not passed(0.749)


def test_a_row_without_claims_is_refused() -> None:
    row = {"TASK": "t", "ENABLED_TOOLS": "[]", "PROMPT": "p", "TRAJECTORY": "[]", "GTFA_CLAIMS": "[]"}
    with pytest.raises(ForgeError, match="GTFA_CLAIMS'.*no claims"):
        parse_row(row, "f.csv row 2")


def test_status_lists_every_server_and_the_task_census(
    upstream_trees: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tree = upstream_trees / "scaleapi+mcp-atlas@b290e67"
    assert status_main(["status", "--data-dir", str(tree)]) == 0
    out = capsys.readouterr().out
    assert f"seeded /data: {tree / 'services/agent-environment/data'}" in out  # the tree's, by default
    assert (
        "wikipedia: needs the live web (offline here)" in out
        and "mcp-code-executor: its pinned npm package" in out
    )
    census = next(line for line in out.splitlines() if line.startswith("tasks ("))
    assert census.endswith("of 10 run here")
    for task in load_file(task_file(tree)):
        assert f"  {task.task_id}: " in out
    assert "  688ba1b3e95696e72dd93e8d: skipped: osm-mcp-server: needs the live web (offline here)" in out
    assert status_main(["status", "--bogus"]) == 2
