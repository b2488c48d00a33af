"""`Forgelab`: the benchmark entry for `forge-eval run forgelab`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from inspect_ai import Task
from inspect_ai.dataset import Sample

from forge_eval.benchmarks._benchmark import Benchmark, OfficialSettings, RunUsed
from forge_eval.benchmarks.forgelab import _protocol
from forge_eval.benchmarks.forgelab._data import DATA_DIR
from forge_eval.benchmarks.forgelab._rollout import rollout_environment
from forge_eval.benchmarks.forgelab._task import (
    DEFAULT_MESSAGE_LIMIT,
    DEFAULT_TIME_LIMIT,
    QUICK_SUBSET,
    forgelab,
    select_samples,
)
from forge_eval.rundir import ProtocolRecord


class Forgelab(Benchmark):
    name = "forgelab"
    description = "offline everyday tool-use tasks: local mail, calendar, tickets, kb, contacts, inventory"
    default_harness = "react"
    official = OfficialSettings(
        trials=3,
        pass_threshold=1.0,
        graded=True,
        message_limit=DEFAULT_MESSAGE_LIMIT,
        time_limit=DEFAULT_TIME_LIMIT,
    )
    quick_subset = QUICK_SUBSET

    def load(self, data_dir: Path | None = None) -> list[Sample]:
        return select_samples("all", data_dir=data_dir or DATA_DIR)

    def task(self, *, seed: int, harness: str, **options: Any) -> Task:
        return forgelab(seed=seed, harness=harness, **options)

    def protocol(self, run: RunUsed) -> ProtocolRecord:
        return _protocol.protocol(run)

    #: A task set up for a training rollout of a real harness (`forge_eval.harnesses.task_environment`).
    rollout_environment = staticmethod(rollout_environment)
