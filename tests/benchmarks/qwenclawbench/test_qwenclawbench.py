"""QwenClawBench: loader on the full shared data, the task's checks (harness, data without upstream's
code), the run's limit; the grading itself is upstream's (test_qwenclawbench_upstream.py)."""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from forge_eval._errors import ForgeError, UsageError
from forge_eval.benchmarks import BENCHMARKS
from forge_eval.benchmarks.qwenclawbench import data_root, load_task, load_tasks, qwenclawbench


def test_all_100_tasks_parse_with_the_published_categories(qwenclawbench_data: Path) -> None:
    tasks = load_tasks(data_root(qwenclawbench_data))
    assert len(tasks) == 100
    assert Counter(t.category for t in tasks) == {
        "Workflow and Agent Orchestration": 21,
        "System Operations and Administration": 20,
        "Knowledge and Memory Management": 15,
        "Finance and Quantitative Trading": 10,
        "Data Analysis and Modeling": 10,
        "Security and Vulnerability Management": 9,
        "Communication and Scheduling": 8,
        "Research and Information Retrieval": 7,
    }
    assert Counter(t.grading_type for t in tasks) == {"hybrid": 99, "automated": 1}
    assert {t.timeout_seconds for t in tasks} == {1800}
    assert all("def grade(" in t.grading_code for t in tasks)
    pairs = Counter(tuple(sorted((t.grading_weights or {}).items())) for t in tasks)
    assert pairs[(("automated", 0.4), ("llm_judge", 0.6))] == 34
    assert pairs[(("automated", 0.5), ("llm_judge", 0.5))] == 21


def test_skips_name_external_dependencies_and_left_out_files(qwenclawbench_data: Path) -> None:
    skipped = BENCHMARKS.get("qwenclawbench").skipped(qwenclawbench_data)
    assert any("feishu" in r for r in skipped.values()) and any("web" in r for r in skipped.values())
    assert any("not in this data copy" in r for r in skipped.values())
    assert len(BENCHMARKS.get("qwenclawbench").load(qwenclawbench_data)) == 100 - len(skipped)


def test_census_on_the_upstream_tree_only_external_services_are_skipped(upstream_trees: Path) -> None:
    """With the workspace code files in the tree, every task with its files runs: 97 of 100 here."""
    skipped = BENCHMARKS.get("qwenclawbench").skipped(upstream_trees / "SKYLENAGE-AI+QwenClawBench@e4eefcf")
    external = {k: v.rsplit(": ", 1)[1] for k, v in skipped.items() if "external dependency" in v}
    # requires_mock needs only its workspace, which upstream runs as it does every task
    assert sorted(external.values()) == ["feishu", "web"]
    assert "task_00007_llm_api_gateway_skill_creation_and_workspace_bootstrap" not in skipped
    missing = [k for k, v in skipped.items() if "not in this data copy" in v]
    # task_00048's files sit under a mis-quoted `"data/` folder in the shared snapshot (non-ASCII path)
    assert missing in ([], ["task_00048_baidu_qianfan_api_integration_test_document"])
    assert len(skipped) == len(external) + len(missing)


def test_front_matter_regex_keeps_dashes_in_the_body(tmp_path: Path) -> None:
    path = tmp_path / "task_1.md"
    path.write_text(
        "---\nid: t1\ncategory: c\nsource_query: 'a: b\n  ---'\ngrading_type: hybrid\n---\n"
        "## Prompt\nfirst\n---\nstill the prompt\n## Automated Checks\n```python\ndef grade(t, w):\n"
        "    return {'a': 1}\n```\n"
    )
    task = load_task(path)
    assert task.prompt == "first\n---\nstill the prompt"
    assert task.grading_code.startswith("def grade(")
    path.write_text("---\nid: t1\ncategory: c\ngrading_type: magic\n---\n## Prompt\nx\n")
    with pytest.raises(ForgeError, match=r"task_1\.md: field 'grading_type'"):
        load_task(path)


def test_task_refuses_other_harnesses_unknown_ids_and_data_without_code(
    qwenclawbench_data: Path, upstream_trees: Path
) -> None:
    tree = str(upstream_trees / "SKYLENAGE-AI+QwenClawBench@e4eefcf")
    with pytest.raises(UsageError, match=r"(?s)'react' is not OpenClaw.*--harness openclaw"):
        qwenclawbench(harness="react", data_dir=tree)
    with pytest.raises(UsageError, match=r"'codex' is not OpenClaw"):
        qwenclawbench(harness="codex", data_dir=tree)
    with pytest.raises(ForgeError, match="task_99999"):
        qwenclawbench(task_ids="task_99999", data_dir=tree)
    with pytest.raises(ForgeError, match="without upstream's code"):
        qwenclawbench(data_dir=str(qwenclawbench_data))
    assert BENCHMARKS.get("qwenclawbench").requirements() == []


def test_openclaw_runs_upstreams_config_prompt_alone_for_the_tasks_timeout_times_the_multiplier(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Upstream runs OpenClaw with its openclaw.json, the task prompt alone as the message, for
    timeout_seconds x --timeout-multiplier (1800 s in v1.1), not 900 s."""
    from inspect_ai.solver import TaskState

    from forge_eval.benchmarks.qwenclawbench._task import qwenclawbench_agent
    from forge_eval.harnesses import HARNESSES

    openclaw = HARNESSES.get("openclaw")
    seen: list[tuple[float, Any, bool]] = []

    def fake_solver(self: Any, **options: Any) -> Any:
        seen.append((self.timeout_s, self.config_template, options["bare_prompt"]))

        async def solve(state: TaskState, generate: Any) -> TaskState:
            return state

        return solve

    monkeypatch.setattr(type(openclaw), "solver", fake_solver)
    meta = {"timeout_seconds": 1800}
    state = TaskState(model="mockllm/model", sample_id="t", epoch=1, input="p", messages=[], metadata=meta)
    config = {"agents": {"defaults": {"compaction": {"mode": "safeguard"}}}}
    asyncio.run(qwenclawbench_agent(openclaw, 1.5, config)(state, None))  # type: ignore[arg-type]
    assert seen == [(2700.0, config, True)]
    # the shared registered harness keeps its own default limit and config
    assert openclaw.timeout_s == 900.0 and openclaw.config_template is None
