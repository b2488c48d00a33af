"""`QwenClawBench`: the benchmark entry for `forge-eval run qwenclawbench`.

The official harness is the real OpenClaw CLI with upstream's `openclaw.json`, started in a workspace
holding the task's files; the task (`_task.py`) stages those files through the harness, and upstream's
own grading (`_upstream.py`) scores the workspace and OpenClaw's session log. Tasks that cannot run
here (external services) are listed as skipped with their reason.
"""

from __future__ import annotations

from typing import Any

from forge_eval.benchmarks._benchmark import Benchmark, Card, OfficialSettings, RunUsed
from forge_eval.benchmarks.qwenclawbench._data import select_tasks
from forge_eval.benchmarks.qwenclawbench._judge import JUDGE, OFFICIAL_JUDGE
from forge_eval.benchmarks.qwenclawbench._protocol import protocol
from forge_eval.benchmarks.qwenclawbench._task import DEFAULT_HARNESS, qwenclawbench
from forge_eval.rundir import ProtocolRecord

#: Runs per task of the published numbers (the benchmark score: mean over tasks of the mean over runs).
RUNS = 3


class QwenClawBench(Benchmark):
    name = "qwenclawbench"
    description = "QwenClawBench v1.1: 100 OpenClaw workspace tasks, hybrid automated + LLM-judge score"
    card = Card(
        runs_here="97 of 100 tasks, with OpenClaw on upstream's config, grading and judge",
        comparable="not yet: OpenClaw's npm build instead of upstream's image (its protocol record says)",
        needs="upstream's tree, OpenClaw (npm), a judge model",
    )
    default_harness = DEFAULT_HARNESS
    accepts_data_dir = True
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

    def judge_info(self, judge_model: str) -> dict[str, Any]:
        """The judge's settings and where its prompt comes from (its sha256 is in the protocol record:
        the prompt is built by upstream's code, not a template of ours)."""
        return {k: v for k, v in JUDGE.info().items() if k != "prompt_sha256"}

    def protocol(self, run: RunUsed) -> ProtocolRecord:
        return protocol(run)
