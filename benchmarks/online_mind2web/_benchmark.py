"""`OnlineMind2Web`: `forge-eval run online_mind2web` (300 live-web tasks, judged by WebJudge)."""

from __future__ import annotations

from forge_eval.benchmarks._benchmark import OfficialSettings
from forge_eval.benchmarks.online_mind2web._data import SOURCES, select_tasks
from forge_eval.benchmarks.online_mind2web._task import online_mind2web
from forge_eval.benchmarks.web import (
    DEFAULT_MAX_STEPS,
    DEFAULT_TIME_LIMIT,
    LiveProtocol,
    LiveWebBenchmark,
)
from forge_eval.benchmarks.web.judges import JUDGE_ROLE

OFFICIAL_JUDGE = "openai/o4-mini"


class OnlineMind2Web(LiveWebBenchmark):
    name = "online_mind2web"
    description = "Online-Mind2Web: 300 live-web tasks on 136 sites, judged by WebJudge"
    official = OfficialSettings(
        trials=3,
        pass_threshold=1.0,
        time_limit=DEFAULT_TIME_LIMIT,
        judge_role=JUDGE_ROLE,
        judge_model=OFFICIAL_JUDGE,
        paper_scores={"success_rate": 0.630},
        paper_source="OpenForgeRL (arXiv 2607.21557): Online-Mind2Web, 300 tasks, after RL",
    )
    live_protocol = LiveProtocol(
        judge="webjudge",
        official_judge=OFFICIAL_JUDGE,
        sources=SOURCES,
        default_version="2025-11",
        default_max_steps=DEFAULT_MAX_STEPS,
        select=select_tasks,
    )
    select_function = select_tasks
    task_function = online_mind2web
