"""What a run cost: model calls, tokens and wall time per sample attempt, per harness and in total.

Cost counts every attempt, not only the surviving one: a sample that errored and was retried (by the
run's own retry or by a resumed run) was paid for twice. The attempts come from the usage ledger
(`forge_eval.rundir.read_usage_ledger`), which `record_usage` fills from the logs before Inspect's
retries remove older ones, so a retry never resets the count.

Tokens follow the provider's prompt / completion split: `prompt_tokens` is every prompt token (Inspect's
input tokens plus cache reads and cache writes), `cached_tokens` the part read from the provider's cache,
`completion_tokens` the output. Agent calls are the model calls without a role (the agent's own; a
bridged harness's internal calls included), failed ones too (they were sent); calls of a role (a judge,
a grader, a simulated user) are counted apart as `role_calls` and `role_tokens`.
"""

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from inspect_ai.event import ModelEvent
from inspect_ai.log import EvalLog, EvalSample
from inspect_ai.model import ModelUsage

from forge_eval.analysis._trials import log_seed, read_run_logs
from forge_eval.rundir import USAGE_KEY, USAGE_LEDGER, read_usage_ledger, write_usage_ledger

#: Summed per attempt, in this order.
COST_COLUMNS = (
    "calls",
    "prompt_tokens",
    "cached_tokens",
    "completion_tokens",
    "role_calls",
    "role_tokens",
    "wall_s",
    "working_s",
)


def prompt_tokens(usage: ModelUsage) -> int:
    """Every prompt token of a call, as providers count them: Inspect's input tokens plus cache reads and
    cache writes (which Inspect counts apart)."""
    return usage.input_tokens + (usage.input_tokens_cache_read or 0) + (usage.input_tokens_cache_write or 0)


def attempt_cost(log: EvalLog, sample: EvalSample) -> dict[str, Any]:
    """One sample attempt's ledger row: where it ran, whether it errored, and its `COST_COLUMNS`."""
    row: dict[str, Any] = {
        USAGE_KEY: f"{sample.uuid or f'{log.eval.eval_id}/{sample.id}/{sample.epoch}'}@{sample.started_at}",
        "task_id": str(sample.id),
        "seed": log_seed(log),
        "epoch": int(sample.epoch),
        "harness": str(log.eval.task_args.get("harness") or ""),
        "errored": sample.error is not None,
        **dict.fromkeys(COST_COLUMNS, 0),
        "wall_s": float(sample.total_time or 0.0),
        "working_s": float(sample.working_time or 0.0),
    }
    for event in sample.events:
        if not isinstance(event, ModelEvent):
            continue
        usage = event.output.usage if event.output else None
        if event.role:
            row["role_calls"] += 1
            row["role_tokens"] += (prompt_tokens(usage) + usage.output_tokens) if usage else 0
            continue
        row["calls"] += 1
        if usage is not None:
            row["prompt_tokens"] += prompt_tokens(usage)
            row["cached_tokens"] += usage.input_tokens_cache_read or 0
            row["completion_tokens"] += usage.output_tokens
    return row


def record_usage(log_dir: Path, logs: Iterable[EvalLog] | None = None) -> dict[str, dict[str, Any]]:
    """Add every sample attempt in `log_dir`'s logs (or `logs`, already read) to its usage ledger, keep
    the attempts the ledger already holds, and return them all (ledgers of sub-folders included)."""
    log_dir = Path(log_dir)
    if not log_dir.is_dir():
        return {}
    rows = read_usage_ledger(log_dir)
    before = len(rows)
    for log in read_run_logs(log_dir) if logs is None else logs:
        for sample in log.samples or []:
            row = attempt_cost(log, sample)
            rows.setdefault(row[USAGE_KEY], row)
    if len(rows) > before or (rows and not (log_dir / USAGE_LEDGER).exists()):
        write_usage_ledger(log_dir, rows)
    return rows


def _totals(rows: list[dict[str, Any]]) -> dict[str, Any]:
    totals: dict[str, Any] = {c: sum(r[c] for r in rows) for c in COST_COLUMNS}
    totals["wall_s"] = round(totals["wall_s"], 3)
    totals["working_s"] = round(totals["working_s"], 3)
    trials = {(r["task_id"], r["seed"], r["epoch"]) for r in rows}
    per_trial = {c: totals[c] / len(trials) for c in COST_COLUMNS} if trials else dict.fromkeys(COST_COLUMNS)
    return {
        **totals,
        "n_attempts": len(rows),
        "n_trials": len(trials),
        "n_retried": len(rows) - len(trials),
        "per_trial": per_trial,
    }


def cost_summary(rows: Iterable[dict[str, Any]], seeds: Iterable[int] | None = None) -> dict[str, Any]:
    """Totals over every attempt (of `seeds`, when given), the same per trial (a trial's retries charged to
    it), and both per harness."""
    keep = None if seeds is None else set(seeds)
    attempts = [r for r in rows if keep is None or r["seed"] in keep]
    harnesses = sorted({r["harness"] for r in attempts})
    return {
        "total": _totals(attempts),
        "per_harness": {h: _totals([r for r in attempts if r["harness"] == h]) for h in harnesses},
        "estimator": (
            "every sample attempt counts, retried and resumed ones included; per_trial = total / trials "
            "(task x seed x epoch); prompt_tokens include cached_tokens (cache reads) and cache writes; "
            "calls are the agent's model calls (failed ones included), role_calls / role_tokens those of "
            "judges, graders and simulated users; wall_s is each attempt's wall-clock time (summed), "
            "working_s the part not spent waiting"
        ),
    }
