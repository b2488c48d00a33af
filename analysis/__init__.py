"""Analysis: logs -> tidy tables; statistics (bootstrap, pass@k, paired tests, the noise floor); cost;
behavior metrics."""

from forge_eval.analysis._bootstrap import (
    CI_METHODS,
    CONFIDENCE_LEVEL,
    N_RESAMPLES,
    RANDOM_STATE,
    STATISTICS,
    WITHIN_TASK,
    BootstrapResult,
    hierarchical_bootstrap,
)
from forge_eval.analysis._budget import (
    at_step_budget,
    budget_curves,
    parse_budgets,
    write_budgets,
)
from forge_eval.analysis._compare import compare_pair, compare_runs
from forge_eval.analysis._cost import COST_COLUMNS, attempt_cost, cost_summary, record_usage
from forge_eval.analysis._matrix import HarnessRun, default_budgets, harness_matrix, load_harness_run
from forge_eval.analysis._metrics import MetricSummary, cell_metrics, summarize_trials, trial_cells
from forge_eval.analysis._noise import (
    minimum_detectable_difference,
    noise_floor,
    paired_noise_floor,
    run_coverage,
)
from forge_eval.analysis._paired import PairedDifference, paired_difference
from forge_eval.analysis._passk import pass_at_k, pass_hat_k
from forge_eval.analysis._runs import RunTrials, load_run
from forge_eval.analysis._trials import is_agent_turn, log_seed, read_run_logs, trials_table
from forge_eval.analysis._usage import USAGE_COLUMNS, trial_usage, usage_per_task
from forge_eval.analysis.behavior import Transcripts, analyze_run, read_run_transcripts, read_transcripts

__all__ = [
    "CONFIDENCE_LEVEL",
    "N_RESAMPLES",
    "RANDOM_STATE",
    "HarnessRun",
    "RunTrials",
    "USAGE_COLUMNS",
    "default_budgets",
    "harness_matrix",
    "load_harness_run",
    "trial_usage",
    "usage_per_task",
    "at_step_budget",
    "budget_curves",
    "COST_COLUMNS",
    "attempt_cost",
    "cost_summary",
    "record_usage",
    "minimum_detectable_difference",
    "noise_floor",
    "paired_noise_floor",
    "run_coverage",
    "compare_pair",
    "compare_runs",
    "is_agent_turn",
    "load_run",
    "log_seed",
    "parse_budgets",
    "write_budgets",
    "read_run_logs",
    "trials_table",
    "BootstrapResult",
    "CI_METHODS",
    "STATISTICS",
    "WITHIN_TASK",
    "hierarchical_bootstrap",
    "MetricSummary",
    "cell_metrics",
    "summarize_trials",
    "trial_cells",
    "PairedDifference",
    "paired_difference",
    "pass_at_k",
    "pass_hat_k",
    "Transcripts",
    "analyze_run",
    "read_run_transcripts",
    "read_transcripts",
]
