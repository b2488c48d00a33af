"""`ClawEval`: the benchmark entry for `forge-eval run claweval`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from inspect_ai import Task
from inspect_ai.dataset import Sample

from forge_eval.benchmarks._benchmark import Benchmark, OfficialSettings
from forge_eval.benchmarks.claweval._data import data_root
from forge_eval.benchmarks.claweval._judge import JUDGE_MAX_TOKENS, OFFICIAL_JUDGE, PROMPT_SHA256
from forge_eval.benchmarks.claweval._scoring import PASS_THRESHOLD, TRIALS
from forge_eval.benchmarks.claweval._task import DEFAULT_HARNESS, claweval, runnable_samples, skipped_tasks


class ClawEval(Benchmark):
    name = "claweval"
    description = "Claw-Eval: 300 assistant tasks on mock services (mail, calendar, CRM, ...); pass^3, pass@3"
    default_harness = DEFAULT_HARNESS
    accepts_data_dir = True
    protocol_pending = (
        "protocol record not yet filled: the agent's system prompt and the judge prompts are our own "
        "wording, the graders read task.yaml's scoring components instead of upstream's grader.py, and "
        "the agent samples at the model's default temperature (upstream: 0)"
    )
    official = OfficialSettings(
        trials=TRIALS,
        pass_threshold=PASS_THRESHOLD,
        graded=True,
        judge_role="judge",
        judge_model=OFFICIAL_JUDGE,
        paper_scores={"pass^3": 0.317, "pass@3": 0.559},
        paper_source="OpenForgeRL (arXiv 2607.21557), ClawEval after RL; subset used there unverified",
    )

    def load(self, data_dir: Path | None = None) -> list[Sample]:
        return runnable_samples(data_root(data_dir))

    def skipped(self, data_dir: Path | None = None, **options: Any) -> dict[str, str]:
        return skipped_tasks(data_root(data_dir), options.get("subset", "all"), options.get("task_ids"))

    def judge_info(self, judge_model: str) -> dict[str, Any]:
        return {
            "prompt_sha256": PROMPT_SHA256,
            "settings": {
                "temperature": 0.0,
                "max_tokens": JUDGE_MAX_TOKENS,
                "calls": "one per llm_judge component, one per word-only safety rule whose tool was called",
            },
            "prompts": "ours (upstream grader prompts are not shipped with the data)",
        }

    def task(self, *, seed: int, harness: str, **options: Any) -> Task:
        return claweval(seed=seed, harness=harness, **options)
