"""Analysis: logs -> tidy tables; statistics (bootstrap, pass@k, paired tests); behavior metrics."""

from forge_eval.analysis._trials import TRIAL_COLUMNS, read_run_logs, trials_table

__all__ = ["TRIAL_COLUMNS", "read_run_logs", "trials_table"]
