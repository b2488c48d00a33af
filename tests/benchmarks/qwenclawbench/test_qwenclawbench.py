"""QwenClawBench: loader on the full shared data, the hybrid formula and its quirks, a real grade() run."""

from __future__ import annotations

import asyncio
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from inspect_ai.model import ChatMessageAssistant, ChatMessageUser

from forge_eval._errors import ForgeError, UsageError
from forge_eval.benchmarks import BENCHMARKS
from forge_eval.benchmarks.qwenclawbench import (
    QwenTask,
    automated_score,
    benchmark_score,
    data_root,
    hybrid_score,
    judge_prompt,
    judge_total,
    load_task,
    load_tasks,
    qwenclawbench,
    run_grade,
    session_events,
    stage_workspace,
    task_score,
    weights,
)


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


def test_hybrid_formula_gate_and_weight_fallbacks() -> None:
    w = {"automated": 0.4, "llm_judge": 0.6}
    assert hybrid_score(0.8, 0.5, w) == pytest.approx(0.4 * 0.8 + 0.6 * 0.5)
    assert hybrid_score(0.7, 1.0, w) == pytest.approx(0.4 * 0.7)  # gate: auto < 0.75 drops the judge
    assert hybrid_score(0.75, 1.0, w) == pytest.approx(0.3 + 0.6)  # the gate is inclusive
    assert hybrid_score(0.7, 1.0, w, simple=True) == pytest.approx(0.28 + 0.6)
    assert weights(None) == (0.5, 0.5)
    assert weights({"automated": 0.7, "llmjudge": 0.3}) == (0.7, 0.5)  # misspelled key -> 0.5
    assert hybrid_score(1.0, 1.0, {"automated": 0.7, "llmjudge": 0.3}) == pytest.approx(1.0)
    assert hybrid_score(1.0, 0.0, {"automated": 0.7, "llm": 0.3}) == pytest.approx(0.7 / 1.2)
    assert weights({"automated": 0, "llm_judge": 0}) == (0.5, 0.5)
    assert task_score("automated", 0.6, 1.0, None) == 0.6


def test_automated_mean_and_benchmark_mean_over_runs() -> None:
    assert automated_score({"a": 1.0, "b": 0.5, "c": True, "d": "n/a"}) == pytest.approx(2.5 / 3)
    assert automated_score({}) == 0.0 and automated_score(None) == 0.0
    runs = {"t1": [1.0, 0.5, 0.0], "t2": [0.9, 0.9, 0.9], "t3": [0.2]}
    assert benchmark_score(runs) == pytest.approx((0.5 + 0.9 + 0.2) / 3)


def test_judge_total_fallbacks() -> None:
    assert judge_total({"scores": {"a": 0.2}, "total": 0.65}) == 0.65
    assert judge_total({"scores": {"a": 0.2, "b": {"score": 0.6}}}) == pytest.approx(0.4)
    assert judge_total({"score": 1.4}) == 1.0 and judge_total({}) == 0.0


def test_real_grade_code_scores_a_staged_workspace(qwenclawbench_data: Path, tmp_path: Path) -> None:
    root = data_root(qwenclawbench_data)
    task = next(t for t in load_tasks(root) if t.task_id.startswith("task_00036"))
    stage_workspace_present(root, task, tmp_path)
    size = (tmp_path / "downloads/annual_sales_report_2024.csv").stat().st_size
    nothing = run_grade(task.grading_code, [], tmp_path)
    assert nothing.error == "" and automated_score(nothing.scores) == 0.0
    (tmp_path / "downloads/text_file_size_report.txt").write_text(
        f"annual_sales_report_2024.csv\n{size} bytes\nannual_sales_report_2024.csv, app_config.yaml, "
        "product_catalog_api_response.json, README_setup.txt, server_access.log\n"
    )
    events = session_events(
        [
            ChatMessageUser(content=task.prompt),
            ChatMessageAssistant(
                content=f"The largest text-like file is annual_sales_report_2024.csv at {size} bytes."
            ),
        ]
    )
    done = run_grade(task.grading_code, events, tmp_path)
    assert done.scores["identified_largest_text_file"] == 1.0 and done.scores["reported_exact_size"] == 1.0
    assert done.scores["created_correct_report_file"] == 1.0
    assert automated_score(done.scores) > 0.5
    assert "annual_sales_report_2024.csv" in judge_prompt(task, events)


def stage_workspace_present(root: Path, task: QwenTask, workspace: Path) -> None:
    """Stage the files this data copy has (its program files are left out)."""
    assets = root / "assets" / task.task_id
    present = tuple(i for i in task.workspace_files if i.source is None or (assets / i.source).is_file())
    stage_workspace(root, replace(task, workspace_files=present), workspace)


def test_broken_grade_code_scores_zero_with_a_reason(tmp_path: Path) -> None:
    outcome = run_grade("def grade(t, w):\n    raise RuntimeError('boom')\n", [], tmp_path)
    assert outcome.scores == {} and "boom" in outcome.error


def test_task_refuses_a_harness_without_a_workspace_and_unknown_ids(qwenclawbench_data: Path) -> None:
    with pytest.raises(UsageError, match=r"(?s)'react' does not.*--harness openclaw"):
        qwenclawbench(harness="react", data_dir=str(qwenclawbench_data))
    with pytest.raises(ForgeError, match="task_99999"):
        qwenclawbench(task_ids="task_99999", data_dir=str(qwenclawbench_data))
    assert BENCHMARKS.get("qwenclawbench").requirements() == []


def test_openclaw_runs_for_the_tasks_timeout_times_the_multiplier(monkeypatch: pytest.MonkeyPatch) -> None:
    """Upstream runs OpenClaw for timeout_seconds x --timeout-multiplier (1800 s in v1.1), not 900 s."""
    from inspect_ai.solver import TaskState

    from forge_eval.benchmarks.qwenclawbench._task import qwenclawbench_agent
    from forge_eval.harnesses import HARNESSES

    openclaw = HARNESSES.get("openclaw")
    seen: list[float] = []

    def fake_solver(self: Any, **options: Any) -> Any:
        seen.append(self.timeout_s)

        async def solve(state: TaskState, generate: Any) -> TaskState:
            return state

        return solve

    monkeypatch.setattr(type(openclaw), "solver", fake_solver)
    meta = {"timeout_seconds": 1800}
    state = TaskState(model="mockllm/model", sample_id="t", epoch=1, input="p", messages=[], metadata=meta)
    asyncio.run(qwenclawbench_agent(openclaw, 1.5)(state, None))  # type: ignore[arg-type]
    assert seen == [2700.0]
    assert openclaw.timeout_s == 900.0  # the shared registered harness keeps its own default
