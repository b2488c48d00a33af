"""`QwenClawBench`: the benchmark entry for `forge-eval run qwenclawbench`.

The official harness is the real OpenClaw CLI started in a workspace holding the task's files; the
task (`_task.py`) stages those files through the harness and grades the workspace it hands back.
Tasks that cannot run here (external services, files left out of the data copy) are listed as
skipped with their reason.
"""

from __future__ import annotations

from forge_eval.benchmarks._benchmark import Benchmark, OfficialSettings
from forge_eval.benchmarks.qwenclawbench._data import select_tasks
from forge_eval.benchmarks.qwenclawbench._judge import JUDGE, OFFICIAL_JUDGE
from forge_eval.benchmarks.qwenclawbench._scoring import RUNS
from forge_eval.benchmarks.qwenclawbench._task import DEFAULT_HARNESS, qwenclawbench


class QwenClawBench(Benchmark):
    name = "qwenclawbench"
    description = "QwenClawBench v1.1: 100 OpenClaw workspace tasks, hybrid automated + LLM-judge score"
    default_harness = DEFAULT_HARNESS
    accepts_data_dir = True
    protocol_pending = (
        "protocol record not yet filled: the judge prompt is our paraphrase of upstream's, the OpenClaw "
        "config is ours (4096-token replies, reasoning off, 128k context), and grading reads a "
        "transcript rebuilt from the proxy instead of OpenClaw's session log"
    )
    official = OfficialSettings(
        trials=RUNS,
        pass_threshold=1.0,
        graded=True,
        judge_role="judge",
        judge_model=OFFICIAL_JUDGE,
        paper_scores={"mean_score": 0.337},
        paper_source="OpenForgeRL (arXiv 2607.21557), QwenClawBench after RL (SFT 14.6 -> RL 33.7)",
    )
    judge = JUDGE
    select_function = select_tasks
    task_function = qwenclawbench
