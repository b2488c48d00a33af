"""QwenClawBench (SKYLENAGE-AI/QwenClawBench @ e4eefcf, v1.1-100): loader, OpenClaw with upstream's config,
upstream's own grading.

The task runs each one in the real OpenClaw CLI with upstream's `openclaw.json` inside a workspace
holding its files (`_task.py`); upstream's `grade_task` (the task's `grade()`, the LLM judge, the hybrid
score) grades the workspace and OpenClaw's own session log, called from the pinned tree
(`_upstream.py`). The benchmark score is the mean over tasks of the mean over runs.
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
from forge_eval.benchmarks.qwenclawbench._judge import JUDGE, OFFICIAL_JUDGE
from forge_eval.benchmarks.qwenclawbench._protocol import protocol
from forge_eval.benchmarks.qwenclawbench._scorer import qwenclawbench_scorer
from forge_eval.benchmarks.qwenclawbench._session import export_sessions
from forge_eval.benchmarks.qwenclawbench._task import qwenclawbench, qwenclawbench_agent
from forge_eval.benchmarks.qwenclawbench._upstream import (
    UpstreamGrade,
    grade_run,
    judge_endpoint,
    local_config,
    openclaw_config,
    upstream_tree,
)

BENCHMARKS.register(QwenClawBench.name, QwenClawBench())

__all__ = [
    "JUDGE",
    "OFFICIAL_JUDGE",
    "SKIP_RULES",
    "SOURCE",
    "QwenClawBench",
    "QwenTask",
    "UpstreamGrade",
    "WorkspaceFile",
    "data_root",
    "export_sessions",
    "grade_run",
    "judge_endpoint",
    "load_task",
    "load_tasks",
    "local_config",
    "openclaw_config",
    "protocol",
    "qwenclawbench",
    "qwenclawbench_agent",
    "qwenclawbench_scorer",
    "sections",
    "select_tasks",
    "skip_reason",
    "stage_workspace",
    "upstream_tree",
]
