"""`WebVoyager`: `forge-eval run webvoyager` (Fara-595 with the MolmoWeb harness; live web only)."""

from __future__ import annotations

from forge_eval.benchmarks._benchmark import Card
from forge_eval.benchmarks.web import LiveWebBenchmark, live_official
from forge_eval.benchmarks.webvoyager._data import DEFAULT_VERSION, SOURCES, select_tasks
from forge_eval.benchmarks.webvoyager._task import webvoyager

OFFICIAL_JUDGE = "openai/gpt-4o"


class WebVoyager(LiveWebBenchmark):
    name = "webvoyager"
    description = "WebVoyager (Fara-595): 595 live-web tasks on 15 sites, MolmoWeb harness, LLM judge"
    card = Card(
        runs_here="no: live web",
        comparable="with the official judge (gpt-4o)",
        needs="internet, Chromium, a judge model",
    )
    official = live_official(
        judge_model=OFFICIAL_JUDGE,
        trials=1,
        paper_scores={"success_rate": 0.723},
        paper_source="OpenForgeRL (arXiv 2607.21557): WebVoyager Fara-595, MolmoWeb harness, after RL",
    )
    judge_name = "webvoyager"
    sources = SOURCES
    default_version = DEFAULT_VERSION
    select_function = select_tasks
    task_function = webvoyager
