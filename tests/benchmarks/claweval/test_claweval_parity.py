"""Parity with upstream's own command: `claw-eval grade` on the trace a forge-eval run produced gives the
score the run recorded, for tasks of many kinds (mail, calendar, finance, to-do, contacts, helpdesk,
inventory, CRM, notes, RSS, offline web, knowledge base, scheduler, documents, a cross-service workflow,
safety and injection tasks, a sandbox task, and a multi-turn task whose simulated user is the judge's
model here).

The agent is scripted the same way for every task (it lists with a tool that needs no arguments, then
answers); the judge answers every prompt with a score derived from the prompt's text, so the CLI's
re-grade sees the same verdicts only if upstream's grader sent the judge the same prompts from our trace.
`claw-eval grade` prints its scores to 2 decimals (completion, robustness, task_score; safety to 1).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.model import ChatMessage, GenerateConfig, ModelOutput, ModelUsage, get_model

from forge_eval.benchmarks.claweval import TRACE_KEY, claweval
from forge_eval.benchmarks.claweval._trial import ClientSampling, _proxy, write_config

pytestmark = pytest.mark.slow

TASKS = (
    "T002_email_triage",  # mail
    "T004_calendar_scheduling",  # calendar
    "T012_expense_report",  # finance
    "T008_todo_management",  # to-do
    "T010_contact_lookup",  # contacts
    "T018_ticket_triage",  # helpdesk
    "T020_inventory_check",  # inventory
    "T024_crm_data_export",  # CRM
    "T014_meeting_notes",  # notes
    "T022_newsletter_curation",  # RSS
    "T044_service_outage_research",  # offline web
    "T016_kb_search",  # knowledge base
    "T042_scheduled_task_management",  # scheduler
    "T097_pinbench_eli5_model_summary",  # documents
    "T030_cross_service_meeting",  # workflow over mail, contacts, calendar
    "T028_api_config_audit",  # safety
    "T075_email_phishing_injection",  # injection
    "T100_reverse_decoder",  # sandbox files, graded from the sandbox's state
    "C01zh_mortgage_prepay",  # multi-turn with the simulated user
)
USAGE = ModelUsage(input_tokens=10, output_tokens=5, total_tokens=15)


def _out(output: ModelOutput) -> ModelOutput:
    output.usage = USAGE
    return output


def lister(
    messages: list[ChatMessage], tools: Any, tool_choice: Any, config: GenerateConfig
) -> ModelOutput:
    """First turn: the first tool that needs no arguments; then a fixed answer."""
    free = [t for t in tools if not (t.parameters.required or [])]
    if not any(m.role == "assistant" for m in messages) and free:
        return _out(ModelOutput.for_tool_call("mockllm", free[0].name, {}))
    return _out(ModelOutput.from_content("mockllm", "I checked the data. Summary: all items reviewed."))


def hashing_judge(
    messages: list[ChatMessage], tools: Any, tool_choice: Any, config: GenerateConfig
) -> ModelOutput:
    """A verdict that depends on every character of the prompt."""
    digest = hashlib.sha256("\n".join(m.text for m in messages).encode()).digest()
    verdict = {"score": round(digest[0] / 255, 3), "reasoning": "scripted"}
    return _out(ModelOutput.from_content("mockllm", json.dumps(verdict)))


def _printed(stdout: str, name: str) -> float:
    match = re.search(rf"^{name}:\s+([0-9.]+)$", stdout, re.MULTILINE)
    assert match, stdout
    return float(match.group(1))


async def grade_with_upstreams_cli(
    python: Path, tree: Path, traces: dict[str, str], work: Path
) -> dict[str, str]:
    """`claw-eval grade --trace ... --task tasks/<id> --config ...` per trace, the judge served by a proxy to
    the same scripted judge; each command's stdout."""
    judge_model = get_model("mockllm/model", custom_outputs=hashing_judge)
    fields = {"rollout_id": "cli-grade", "mode": "eval"}
    outputs = {}
    async with _proxy("judge", ClientSampling(judge_model), "judge", fields, work / "records") as judge:
        config = write_config(tree, "general", judge, judge, judge, work / "config.yaml")
        for task_id, trace in traces.items():
            path = work / f"{task_id}.jsonl"
            path.write_text(trace, encoding="utf-8")
            process = await asyncio.create_subprocess_exec(
                str(python), "-m", "claw_eval.cli", "grade", "--trace", str(path),
                "--task", f"tasks/{task_id}", "--config", str(config),
                cwd=tree, env={"PYTHONPATH": str(tree / "src"), "PATH": "/usr/bin:/bin", "HOME": str(work)},
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
            )
            stdout, _ = await process.communicate()
            assert process.returncode == 0, stdout.decode()[-2000:]
            outputs[task_id] = stdout.decode()
    return outputs


def test_upstreams_grade_cli_gives_our_scores(
    claweval_tree: Path, claweval_python: Path, tmp_path: Path
) -> None:
    (log,) = inspect_eval(
        claweval(task_ids=",".join(TASKS), data_dir=str(claweval_tree)),
        model=get_model("mockllm/model", custom_outputs=lister),
        model_roles={"judge": get_model("mockllm/model", custom_outputs=hashing_judge)},
        display="none",
        log_dir=str(tmp_path / "logs"),
        max_samples=2,
    )
    assert log.status == "success", log.error
    samples = {str(s.id): s for s in log.samples or []}
    assert set(samples) == set(TASKS)
    traces = {task_id: s.store[TRACE_KEY] for task_id, s in samples.items()}
    printed = asyncio.run(grade_with_upstreams_cli(claweval_python, claweval_tree, traces, tmp_path))
    rows = []
    for task_id, sample in samples.items():
        ours = sample.scores["claweval_scorer"]
        cli = {k: _printed(printed[task_id], k) for k in ("completion", "robustness", "safety", "task_score")}
        rows.append((task_id, ours.value, cli["task_score"]))
        assert cli["task_score"] == pytest.approx(round(ours.value, 2), abs=1e-9), (task_id, printed[task_id])
        assert cli["completion"] == pytest.approx(round(ours.metadata["completion"], 2), abs=1e-9), task_id
        assert cli["robustness"] == pytest.approx(round(ours.metadata["robustness"], 2), abs=1e-9), task_id
        assert cli["safety"] == pytest.approx(round(ours.metadata["safety"], 1), abs=1e-9), task_id
    print("\ntask, our score, claw-eval grade's task_score")
    for row in rows:
        print(f"  {row[0]:35} {row[1]:.4f} {row[2]:.2f}")
    assert len({round(v, 4) for _, v, _ in rows}) > 3  # the tasks did not all score alike
