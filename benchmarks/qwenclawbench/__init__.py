"""QwenClawBench (SKYLENAGE-AI/QwenClawBench @ e4eefcf, v1.1-100): loader, grade() runner, hybrid scoring.

The task runs each one in the real OpenClaw CLI inside a workspace holding its files (`_task.py`).
Tasks are Markdown files with YAML front matter and an embedded `grade()`; a run's score is the
hybrid (w_a s_auto + w_l s_llm 1[s_auto >= 0.75]) / (w_a + w_l) with upstream's weight fallbacks,
the benchmark score the mean over tasks of the mean over 3 runs.
"""

from forge_eval.benchmarks._benchmark import BENCHMARKS
from forge_eval.benchmarks.qwenclawbench._benchmark import QwenClawBench
from forge_eval.benchmarks.qwenclawbench._data import (
    SKIP_RULES,
    SOURCE,
    QwenTask,
    WorkspaceFile,
    data_root,
    load_task,
    load_tasks,
    sections,
    select_tasks,
    skip_reason,
    stage_workspace,
)
from forge_eval.benchmarks.qwenclawbench._grade import GradeOutcome, run_grade, session_events
from forge_eval.benchmarks.qwenclawbench._judge import (
    JUDGE,
    OFFICIAL_JUDGE,
    judge_prompt,
    judge_total,
    summarize,
)
from forge_eval.benchmarks.qwenclawbench._scorer import qwenclawbench_scorer
from forge_eval.benchmarks.qwenclawbench._scoring import (
    automated_score,
    benchmark_score,
    hybrid_score,
    task_score,
    weights,
)
from forge_eval.benchmarks.qwenclawbench._task import qwenclawbench, qwenclawbench_agent

BENCHMARKS.register(QwenClawBench.name, QwenClawBench())

__all__ = [
    "JUDGE",
    "OFFICIAL_JUDGE",
    "SKIP_RULES",
    "SOURCE",
    "GradeOutcome",
    "QwenClawBench",
    "QwenTask",
    "WorkspaceFile",
    "automated_score",
    "benchmark_score",
    "data_root",
    "hybrid_score",
    "judge_prompt",
    "judge_total",
    "load_task",
    "load_tasks",
    "qwenclawbench",
    "qwenclawbench_agent",
    "qwenclawbench_scorer",
    "run_grade",
    "sections",
    "select_tasks",
    "session_events",
    "skip_reason",
    "stage_workspace",
    "summarize",
    "task_score",
    "weights",
]
