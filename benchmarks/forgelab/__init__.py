"""forgelab: forge-eval's own offline benchmark of everyday tool-use tasks.

Tasks (benchmarks/forgelab/tasks.yaml) run against the local services in
`forge_eval.benchmarks.services`; verifiers check the final service state and the answer.
"""

from forge_eval.benchmarks._benchmark import BENCHMARKS
from forge_eval.benchmarks.forgelab._benchmark import Forgelab
from forge_eval.benchmarks.forgelab._checks import CHECKS, CheckContext, CheckResult, run_checks
from forge_eval.benchmarks.forgelab._data import (
    QUICK_SUBSET,
    PlanStep,
    TaskSpec,
    load_tasks,
    load_world,
    select_tasks,
)
from forge_eval.benchmarks.forgelab._scorer import forgelab_scorer, pass_rate
from forge_eval.benchmarks.forgelab._task import SYSTEM_PROMPT, forgelab
from forge_eval.benchmarks.services import TOOL_SPECS, ToolSpec

BENCHMARKS.register(Forgelab.name, Forgelab())

__all__ = [
    "CHECKS",
    "QUICK_SUBSET",
    "SYSTEM_PROMPT",
    "TOOL_SPECS",
    "CheckContext",
    "CheckResult",
    "Forgelab",
    "PlanStep",
    "TaskSpec",
    "ToolSpec",
    "forgelab",
    "forgelab_scorer",
    "load_tasks",
    "load_world",
    "pass_rate",
    "run_checks",
    "select_tasks",
]
