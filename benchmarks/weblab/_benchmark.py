"""`Weblab`: the benchmark entry for `forge-eval run weblab`."""

from __future__ import annotations

from forge_eval.benchmarks._benchmark import Benchmark, Card, OfficialSettings, RunUsed
from forge_eval.benchmarks.web import browser_requirements
from forge_eval.benchmarks.weblab import _protocol
from forge_eval.benchmarks.weblab._data import QUICK_SUBSET, select_tasks
from forge_eval.benchmarks.weblab._task import DEFAULT_TIME_LIMIT, weblab
from forge_eval.rundir import ProtocolRecord


class Weblab(Benchmark):
    name = "weblab"
    description = "offline web tasks in a real browser on six local sites (shop, flights, recipes, wiki, ...)"
    card = Card(
        runs_here="yes, 31 tasks (local sites)",
        comparable="yes, run as defined (our own benchmark)",
        needs="Chromium, Playwright",
    )
    default_harness = "molmoweb"
    official = OfficialSettings(trials=1, pass_threshold=1.0, time_limit=DEFAULT_TIME_LIMIT)
    resources = {"browser": 1}
    quick_subset = QUICK_SUBSET
    select_function = select_tasks
    task_function = weblab

    def requirements(self) -> list[str]:
        missing = browser_requirements()
        try:
            # optional dependency (the `web` extra): python-multipart, the sites' form parsing
            import multipart  # noqa: F401
        except ImportError:
            missing.append("the weblab sites need python-multipart: pip install 'forge-eval[web]'")
        return missing

    def protocol(self, run: RunUsed) -> ProtocolRecord:
        return _protocol.protocol(run)
