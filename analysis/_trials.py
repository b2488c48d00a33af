"""Read a run's Inspect logs into one tidy trials table (one row per task x seed x epoch).

Everything downstream — headline metrics, the report, behavioral analysis — starts from this table,
so it is read once, from the logs themselves (the single source of truth), never from a cache.
"""

import math
from pathlib import Path

import pandas as pd
from inspect_ai.event import ModelEvent
from inspect_ai.log import EvalLog, list_eval_logs, read_eval_log
from inspect_ai.scorer import value_to_float

from forge_eval._errors import UsageError
from forge_eval.rundir import LOG_FILE, TRIAL_COLUMNS

_to_float = value_to_float()


def read_run_logs(log_dir: Path) -> list[EvalLog]:
    """All eval logs under `log_dir`, newest first (Inspect's own listing order)."""
    return [read_eval_log(info) for info in list_eval_logs(str(log_dir))]


def is_agent_turn(event: object) -> bool:
    """A model call of the agent: judges and graders (events with a `role`) and failed calls are not.

    With a bridged harness every call it makes through the proxy is such an event, harness-internal
    calls (titles, planners, subagents) included.
    """
    return isinstance(event, ModelEvent) and not event.role and not event.error and bool(event.output.choices)


def log_seed(log: EvalLog) -> int:
    """The run seed of a log: forge-eval passes it as a task argument (one task per seed), else the
    seed of a plain Inspect run (`--seed`: the plan's generate config, or the model's). A log with none
    is refused: counting it as seed 0 would silently merge it with a real seed-0 run in every per-seed
    number and in the pairing of two runs."""
    candidates = (
        log.eval.task_args.get("seed"),
        log.plan.config.seed if log.plan else None,
        log.eval.model_generate_config.seed,
    )
    seed = next((c for c in candidates if c is not None), None)
    if seed is None:
        raise UsageError(
            f"log {log.location or log.eval.task} has no seed (no task argument `seed`, no generate-config "
            "seed), so its trials cannot be placed in a task x seed cell",
            hint="analyze runs made by `forge-eval run`, or run Inspect with --seed / -T seed=N",
        )
    return int(seed)


def trials_table(logs: list[EvalLog], threshold: float, metadata_keys: tuple[str, ...] = ()) -> pd.DataFrame:
    """One row per (task, seed, epoch) sample in `logs`.

    Args:
        logs: Eval logs of one run (one per seed); when a seed has several logs (a retried task),
            the newest sample of each (task, seed, epoch) wins.
        threshold: A trial passes when its score is >= threshold.
        metadata_keys: Sample metadata fields to copy into columns (e.g. difficulty, category).

    Returns:
        Columns `task_id, seed, epoch, score, passed, error, model_turns, log_file` plus
        `metadata_keys`; `score` is NaN for a trial that errored or was not scored (it then counts as
        not passed); `model_turns` counts the agent's model calls (`is_agent_turn`), for step budgets.
    """
    rows: dict[tuple[str, int, int], dict] = {}
    for log in sorted(logs, key=lambda lg: lg.eval.created):
        seed = log_seed(log)
        for sample in log.samples or []:
            score = math.nan
            if sample.scores:
                first = next(iter(sample.scores.values()))
                score = _to_float(first.value)
            error = sample.error.message if sample.error else ""
            if error:
                score = math.nan
            row = {
                "task_id": str(sample.id),
                "seed": seed,
                "epoch": int(sample.epoch),
                "score": score,
                "passed": bool(not math.isnan(score) and score >= threshold),
                "error": error,
                "model_turns": sum(1 for event in sample.events if is_agent_turn(event)),
                LOG_FILE: Path(log.location).name if log.location else "",
            }
            for key in metadata_keys:
                row[key] = (sample.metadata or {}).get(key)
            rows[(row["task_id"], seed, row["epoch"])] = row
    table = pd.DataFrame(list(rows.values()), columns=[*TRIAL_COLUMNS, LOG_FILE, *metadata_keys])
    return table.sort_values(["task_id", "seed", "epoch"], ignore_index=True)
