"""`QwenClawBench`: the benchmark entry for `forge-eval run qwenclawbench`.

The official harness is the real OpenClaw CLI started in a workspace holding the task's files, and
grading needs that workspace and OpenClaw's session transcript after the run. `requirements()` says
so until the OpenClaw harness can take a prepared workspace and hand both back; loading, the skip
list and all scoring work without it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from inspect_ai import Task
from inspect_ai.dataset import Sample

from forge_eval._errors import ForgeError
from forge_eval.benchmarks._benchmark import Benchmark, OfficialSettings
from forge_eval.benchmarks.qwenclawbench._data import QwenTask, data_root, load_tasks, skip_reason
from forge_eval.benchmarks.qwenclawbench._judge import JUDGE_MAX_TOKENS, OFFICIAL_JUDGE, PROMPT_SHA256
from forge_eval.benchmarks.qwenclawbench._scoring import RUNS

HARNESS_GAP = (
    "QwenClawBench runs in the real OpenClaw CLI inside a workspace holding each task's files, and "
    "grades that workspace and OpenClaw's session transcript afterwards; the 'openclaw' harness does not "
    "yet accept a prepared workspace nor return them (forge_eval.harnesses._external)"
)


def to_sample(root: Path, task: QwenTask) -> Sample:
    return Sample(
        id=task.task_id,
        input=task.prompt,
        metadata={
            "data_root": str(root),
            "category": task.category,
            "grading_type": task.grading_type,
            "timeout_seconds": task.timeout_seconds,
            "grading_weights": task.grading_weights,
        },
    )


class QwenClawBench(Benchmark):
    name = "qwenclawbench"
    description = "QwenClawBench v1.1: 100 OpenClaw workspace tasks, hybrid automated + LLM-judge score"
    default_harness = "openclaw"
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

    def requirements(self) -> list[str]:
        return [HARNESS_GAP]

    def load(self, data_dir: Path | None = None) -> list[Sample]:
        root = data_root(data_dir)
        return [to_sample(root, t) for t in load_tasks(root) if skip_reason(root, t) is None]

    def skipped(self, data_dir: Path | None = None, **options: Any) -> dict[str, str]:
        root = data_root(data_dir)
        return {t.task_id: r for t in load_tasks(root) if (r := skip_reason(root, t))}

    def judge_info(self, judge_model: str) -> dict[str, Any]:
        return {
            "prompt_sha256": PROMPT_SHA256,
            "settings": {"temperature": 0.0, "max_tokens": JUDGE_MAX_TOKENS, "gate": "s_auto >= 0.75"},
        }

    def task(self, *, seed: int, harness: str, **options: Any) -> Task:
        raise ForgeError(f"cannot build the QwenClawBench task: {HARNESS_GAP}")
