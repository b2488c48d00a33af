"""`OnlineMind2Web`: `forge-eval run online_mind2web` (300 live-web tasks, judged by WebJudge)."""

from __future__ import annotations

from forge_eval.benchmarks._benchmark import Card
from forge_eval.benchmarks.online_mind2web._data import DEFAULT_VERSION, SOURCES, select_tasks
from forge_eval.benchmarks.online_mind2web._task import online_mind2web
from forge_eval.benchmarks.web import LiveWebBenchmark, live_official

OFFICIAL_JUDGE = "openai/o4-mini"


class OnlineMind2Web(LiveWebBenchmark):
    name = "online_mind2web"
    description = "Online-Mind2Web: 300 live-web tasks on 136 sites, judged by WebJudge"
    card = Card(
        runs_here="no: live web",
        comparable="with the official judge (o4-mini)",
        needs="internet, Chromium, a judge model",
    )
    official = live_official(
        judge_model=OFFICIAL_JUDGE,
        trials=3,
        paper_scores={"success_rate": 0.630},
        paper_source="OpenForgeRL (arXiv 2607.21557): Online-Mind2Web, 300 tasks, after RL",
    )
    judge_name = "webjudge"
    sources = SOURCES
    default_version = DEFAULT_VERSION
    select_function = select_tasks
    task_function = online_mind2web
