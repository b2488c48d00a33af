"""Analysis: logs -> tidy tables; statistics (bootstrap, pass@k, paired tests); behavior metrics."""

from forge_eval.analysis._bootstrap import (
    CI_METHODS,
    STATISTICS,
    WITHIN_TASK,
    BootstrapResult,
    hierarchical_bootstrap,
)
from forge_eval.analysis._metrics import MetricSummary, cell_metrics, summarize_trials, trial_cells
from forge_eval.analysis._paired import PairedDifference, paired_difference
from forge_eval.analysis._passk import pass_at_k, pass_hat_k
from forge_eval.analysis._trials import TRIAL_COLUMNS, read_run_logs, trials_table
from forge_eval.analysis.behavior import Transcripts, analyze_run, read_run_transcripts, read_transcripts

__all__ = [
    "TRIAL_COLUMNS",
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
