"""Online-Mind2Web: 300 live-web tasks (easy/medium/hard) on 136 sites, started on the task's website and
judged by WebJudge (key points, screenshot relevance, outcome). Needs the live web; offline,
`forge-eval run online_mind2web` exits 2 with a message."""

from forge_eval.benchmarks._benchmark import BENCHMARKS
from forge_eval.benchmarks.online_mind2web._benchmark import OFFICIAL_JUDGE, OnlineMind2Web
from forge_eval.benchmarks.online_mind2web._data import (
    REVISED_SUFFIX,
    SOURCES,
    VERSIONS,
    Mind2WebTask,
    load_tasks,
    select_tasks,
)
from forge_eval.benchmarks.online_mind2web._scorer import online_mind2web_scorer
from forge_eval.benchmarks.online_mind2web._task import online_mind2web
from forge_eval.benchmarks.web import DEFAULT_MAX_STEPS

BENCHMARKS.register(OnlineMind2Web.name, OnlineMind2Web())

__all__ = [
    "DEFAULT_MAX_STEPS",
    "OFFICIAL_JUDGE",
    "REVISED_SUFFIX",
    "SOURCES",
    "VERSIONS",
    "Mind2WebTask",
    "OnlineMind2Web",
    "load_tasks",
    "online_mind2web",
    "online_mind2web_scorer",
    "select_tasks",
]
