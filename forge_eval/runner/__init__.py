"""Run orchestration: seeds, run directories, resumable eval sets, results and reports."""

from forge_eval.runner._execute import RunResult, run_benchmark, summarize_run
from forge_eval.runner._model import ResolvedModel, resolved_model
from forge_eval.runner._spec import RunSpec

__all__ = ["ResolvedModel", "RunResult", "RunSpec", "resolved_model", "run_benchmark", "summarize_run"]
