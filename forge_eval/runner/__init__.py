"""Run orchestration: seeds, run directories, resumable eval sets, shards on clusters, results, reports."""

from forge_eval.runner._execute import RunResult, execute, run_benchmark, summarize_run
from forge_eval.runner._model import PLACEHOLDER_API_KEY, ResolvedModel, resolved_model
from forge_eval.runner._plan import RunPlan, plan_run
from forge_eval.runner._sharded import execute_sharded
from forge_eval.runner._shards import Shard, plan_shards
from forge_eval.runner._spec import RunSpec

__all__ = [
    "PLACEHOLDER_API_KEY",
    "ResolvedModel",
    "RunPlan",
    "RunResult",
    "RunSpec",
    "Shard",
    "execute",
    "execute_sharded",
    "plan_run",
    "plan_shards",
    "resolved_model",
    "run_benchmark",
    "summarize_run",
]
