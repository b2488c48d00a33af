"""WebVoyager (Fara-595): live-web browsing tasks on 15 sites, run with the MolmoWeb harness at 1280x720
and judged by WebVoyager's LLM judge (task, final answer, last screenshots). Needs the live web; offline,
`forge-eval run webvoyager` exits 2 with a message."""

from forge_eval.benchmarks._benchmark import BENCHMARKS
from forge_eval.benchmarks.web import DEFAULT_MAX_STEPS
from forge_eval.benchmarks.webvoyager._benchmark import OFFICIAL_JUDGE, WebVoyager
from forge_eval.benchmarks.webvoyager._data import (
    SOURCES,
    VERSIONS,
    VoyagerTask,
    load_tasks,
    prompt,
    select_tasks,
)
from forge_eval.benchmarks.webvoyager._scorer import webvoyager_scorer
from forge_eval.benchmarks.webvoyager._task import webvoyager

BENCHMARKS.register(WebVoyager.name, WebVoyager())

__all__ = [
    "DEFAULT_MAX_STEPS",
    "OFFICIAL_JUDGE",
    "SOURCES",
    "VERSIONS",
    "VoyagerTask",
    "WebVoyager",
    "load_tasks",
    "prompt",
    "select_tasks",
    "webvoyager",
    "webvoyager_scorer",
]
