"""`WebVoyager`: `forge-eval run webvoyager` (Fara-595 with the MolmoWeb harness; live web only)."""

from __future__ import annotations

from forge_eval.benchmarks._benchmark import OfficialSettings
from forge_eval.benchmarks.web import (
    DEFAULT_MAX_STEPS,
    DEFAULT_TIME_LIMIT,
    LiveProtocol,
    LiveWebBenchmark,
)
from forge_eval.benchmarks.web.judges import JUDGE_ROLE
from forge_eval.benchmarks.webvoyager._data import SOURCES, select_tasks
from forge_eval.benchmarks.webvoyager._task import webvoyager

OFFICIAL_JUDGE = "openai/gpt-4o"


class WebVoyager(LiveWebBenchmark):
    name = "webvoyager"
    description = "WebVoyager (Fara-595): 595 live-web tasks on 15 sites, MolmoWeb harness, LLM judge"
    official = OfficialSettings(
        trials=1,
        pass_threshold=1.0,
        time_limit=DEFAULT_TIME_LIMIT,
        judge_role=JUDGE_ROLE,
        judge_model=OFFICIAL_JUDGE,
        paper_scores={"success_rate": 0.723},
        paper_source="OpenForgeRL (arXiv 2607.21557): WebVoyager Fara-595, MolmoWeb harness, after RL",
    )
    live_protocol = LiveProtocol(
        judge="webvoyager",
        official_judge=OFFICIAL_JUDGE,
        sources=SOURCES,
        default_version="fara",
        default_max_steps=DEFAULT_MAX_STEPS,
        select=select_tasks,
    )
    select_function = select_tasks
    task_function = webvoyager
