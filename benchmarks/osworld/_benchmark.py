"""`OSWorld`: the benchmark entry for `forge-eval run osworld`."""

from __future__ import annotations

from forge_eval.benchmarks._benchmark import Benchmark, Card, OfficialSettings, RunUsed
from forge_eval.benchmarks.osworld._evaluators import INSTALL_HINT
from forge_eval.benchmarks.osworld._protocol import protocol
from forge_eval.benchmarks.osworld._providers import make_provider
from forge_eval.benchmarks.osworld._task import osworld, select_tasks
from forge_eval.benchmarks.osworld.install import missing_checker_packages
from forge_eval.rundir import ProtocolRecord


class OSWorld(Benchmark):
    name = "osworld"
    description = "OSWorld-Verified: 369 Ubuntu desktop tasks scored by OSWorld's own execution checkers"
    card = Card(
        runs_here=(
            "47 of 369 tasks offline, 311 online (local desktop; upstream's checkers, agent and in-VM server)"
        ),
        comparable="only on OSWorld's VM provider (KVM)",
        needs="desktop packages, root",
    )
    default_harness = "computer"
    # One trial, execution-based scores in [0, 1] (a few metrics are graded), no judge; OSWorld's success
    # rate is the mean of the task results, fractional ones included.
    official = OfficialSettings(trials=1, pass_threshold=1.0, graded=True, fractional_success=True)
    accepts_data_dir = True
    resources = {"desktop": 1}
    #: --quick: fast-starting local tasks (VLC settings, one infeasible) for a pipeline check.
    quick_subset = (
        "9195653c-f4aa-453d-aa95-787f6ccfaae9",
        "215dfd39-f493-4bc3-a027-8a97d72c61bf",
        "cb130f0d-d36f-4302-9838-b3baf46139b6",
    )
    select_function = select_tasks
    task_function = osworld

    def protocol(self, run: RunUsed) -> ProtocolRecord:
        return protocol(run)

    def requirements(self) -> list[str]:
        missing = []
        if packages := missing_checker_packages():
            missing.append(f"the packages OSWorld's checkers import: {', '.join(packages)} ({INSTALL_HINT})")
        return missing + make_provider("local").requirements()
