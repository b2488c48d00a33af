"""Model calls and tokens per trial, read from the logs: what a harness spends on a task.

Two harnesses that reach the same success rate may spend very different numbers of calls and tokens on
it; a harness matrix reports both. Only the agent's own model calls count (`is_agent_turn`: judges and
graders excluded; a bridged harness's internal calls included), each with the usage its provider returned.
"""

import pandas as pd
from inspect_ai.event import ModelEvent
from inspect_ai.log import EvalLog

from forge_eval.analysis._cost import prompt_tokens
from forge_eval.analysis._trials import is_agent_turn, log_seed

#: Per-trial usage columns after task_id, seed, epoch; tokens as the run's cost counts them
#: (`prompt_tokens` includes the cached ones, as providers bill them).
USAGE_COLUMNS = ("calls", "prompt_tokens", "completion_tokens", "cached_tokens", "total_tokens")


def trial_usage(logs: list[EvalLog]) -> pd.DataFrame:
    """One row per (task_id, seed, epoch): the agent's model calls and their tokens (`USAGE_COLUMNS`).

    When a seed has several logs (a retried task), the newest sample of each trial wins, as in
    `trials_table`.
    """
    rows: dict[tuple[str, int, int], dict[str, object]] = {}
    for log in sorted(logs, key=lambda lg: lg.eval.created):
        seed = log_seed(log)
        for sample in log.samples or []:
            turns = [e for e in sample.events if is_agent_turn(e)]
            row: dict[str, object] = {"task_id": str(sample.id), "seed": seed, "epoch": int(sample.epoch)}
            row.update(_tokens(turns))
            rows[(str(sample.id), seed, int(sample.epoch))] = row
    table = pd.DataFrame(list(rows.values()), columns=["task_id", "seed", "epoch", *USAGE_COLUMNS])
    return table.sort_values(["task_id", "seed", "epoch"], ignore_index=True)


def _tokens(turns: list[ModelEvent]) -> dict[str, int]:
    counts = dict.fromkeys(USAGE_COLUMNS, 0)
    counts["calls"] = len(turns)
    for event in turns:
        usage = event.output.usage
        if usage is None:
            continue
        counts["prompt_tokens"] += prompt_tokens(usage)
        counts["completion_tokens"] += usage.output_tokens
        counts["cached_tokens"] += usage.input_tokens_cache_read or 0
        counts["total_tokens"] += prompt_tokens(usage) + usage.output_tokens
    return counts


def usage_per_task(usage: pd.DataFrame) -> dict[str, object]:
    """Calls and tokens per task: each task's mean over its trials, then the mean over tasks (so a task
    weighs the same however many of its trials finished), and the per-task means."""
    if usage.empty:
        return {"mean_per_task": dict.fromkeys(USAGE_COLUMNS), "per_task": {}, "n_trials": 0}
    per_task = usage.groupby("task_id")[list(USAGE_COLUMNS)].mean()
    return {
        "mean_per_task": {c: float(per_task[c].mean()) for c in USAGE_COLUMNS},
        "per_task": {str(t): {c: float(row[c]) for c in USAGE_COLUMNS} for t, row in per_task.iterrows()},
        "n_trials": len(usage),
    }


def usage_cells(usage: pd.DataFrame, column: str) -> pd.DataFrame:
    """(task_id, seed, value): the mean of `column` over each cell's epochs, for paired differences."""
    cells = usage.groupby(["task_id", "seed"], as_index=False)[column].mean()
    return cells.rename(columns={column: "value"})
