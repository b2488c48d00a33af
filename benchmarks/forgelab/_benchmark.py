"""`Forgelab`: the benchmark entry for `forge-eval run forgelab`."""

from __future__ import annotations

from typing import Any

from forge_eval.benchmarks._benchmark import Benchmark, Card, OfficialSettings, RunUsed
from forge_eval.benchmarks.forgelab import _protocol
from forge_eval.benchmarks.forgelab._data import QUICK_SUBSET, select_tasks
from forge_eval.benchmarks.forgelab._rollout import rollout_environment
from forge_eval.benchmarks.forgelab._task import DEFAULT_MESSAGE_LIMIT, DEFAULT_TIME_LIMIT, forgelab
from forge_eval.harnesses import TaskEnvironment
from forge_eval.rundir import ProtocolRecord


class Forgelab(Benchmark):
    name = "forgelab"
    description = "offline everyday tool-use tasks: local mail, calendar, tickets, kb, contacts, inventory"
    card = Card(
        runs_here="yes, 29 tasks",
        comparable="yes, run as defined (our own benchmark)",
        needs="nothing",
    )
    default_harness = "react"
    official = OfficialSettings(
        trials=3,
        pass_threshold=1.0,
        graded=True,
        message_limit=DEFAULT_MESSAGE_LIMIT,
        time_limit=DEFAULT_TIME_LIMIT,
    )
    quick_subset = QUICK_SUBSET
    select_function = select_tasks
    task_function = forgelab

    def protocol(self, run: RunUsed) -> ProtocolRecord:
        return _protocol.protocol(run)

    async def rollout_environment(self, task: dict[str, Any]) -> TaskEnvironment:
        return await rollout_environment(task)
