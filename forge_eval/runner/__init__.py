"""Run orchestration: seeds, run directories, resumable eval sets, shards on clusters, results, reports;
and dry runs, which plan a run without starting it."""

from forge_eval.runner._dry_run import DryRun, ShardPlan, dry_run
from forge_eval.runner._execute import RunResult, execute, run_benchmark, summarize_run
from forge_eval.runner._matrix import MatrixPlan, execute_matrix, harness_names, plan_matrix, summarize_matrix
from forge_eval.runner._model import PLACEHOLDER_API_KEY, ResolvedModel, resolved_model
from forge_eval.runner._plan import RunPlan, plan_run
from forge_eval.runner._sharded import execute_shard_sets, execute_sharded
from forge_eval.runner._shards import Shard, plan_shards
from forge_eval.runner._spec import RunSpec

__all__ = [
    "DryRun",
    "MatrixPlan",
    "execute_matrix",
    "execute_shard_sets",
    "harness_names",
    "plan_matrix",
    "summarize_matrix",
    "PLACEHOLDER_API_KEY",
    "ResolvedModel",
    "RunPlan",
    "RunResult",
    "RunSpec",
    "Shard",
    "ShardPlan",
    "dry_run",
    "execute",
    "execute_sharded",
    "plan_run",
    "plan_shards",
    "resolved_model",
    "run_benchmark",
    "summarize_run",
]
