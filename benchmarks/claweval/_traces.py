"""A run's Claw-Eval traces in upstream's layout, for upstream's own `score_summary.py`.

Each sample's store keeps the trace upstream's runner wrote and its grader completed (`TRACE_KEY`). This
writes them as `claw-eval batch` leaves them, `<folder>/<task_id>_<trace id[:8]>.jsonl`, one folder per
seed (upstream summarizes one run of its trials per task), so that upstream's summary counts them with its
pass line and trial padding (missing trials count as 0 up to its 3). A sample that ended in an error has
no graded trace: it is written as an empty trace file, which upstream counts as an ungraded trial, as it
counts a `batch` worker's trace that ended before its grading event.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from inspect_ai.log import EvalLog, list_eval_logs, read_eval_log

from forge_eval._errors import ForgeError
from forge_eval.benchmarks.claweval._trial import TRACE_KEY


def newest_per_seed(logs: list[EvalLog]) -> dict[int, EvalLog]:
    """Each seed's newest log (a retried seed's newer log holds its finished samples too)."""
    newest: dict[int, EvalLog] = {}
    for log in sorted(logs, key=lambda lg: lg.eval.created):
        newest[int(log.eval.task_args.get("seed", 0))] = log
    return dict(sorted(newest.items()))


def write_traces(log: EvalLog, folder: Path) -> int:
    """Write the log's Claw-Eval trials into `folder` in upstream's layout; how many were written."""
    written = 0
    for sample in log.samples or []:
        trace = sample.store.get(TRACE_KEY) or ""
        if not trace and sample.error is None:
            continue
        if trace:
            trace_id = json.loads(trace.splitlines()[0])["trace_id"][:8]
        else:  # no trace: a name as upstream's error pattern reads it (<task_id>_<8 hex>.jsonl)
            trace_id = hashlib.sha256(f"{sample.id}/{sample.epoch}".encode()).hexdigest()[:8]
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{sample.id}_{trace_id}.jsonl").write_text(trace, encoding="utf-8")
        written += 1
    return written


def export_traces(logs_dir: Path, out: Path, run_name: str = "forge-eval") -> list[Path]:
    """Write every Claw-Eval trial of the Inspect logs under `logs_dir` into `out`, one folder per seed
    (`<out>/<model>-seed<seed>/<run_name>`, the layout `score_summary.py OUT` reads); the folders.

    Raises:
        ForgeError: no Claw-Eval trace in the logs.
    """
    logs = [read_eval_log(info) for info in list_eval_logs(str(logs_dir), recursive=True)]
    folders = []
    for seed, log in newest_per_seed(logs).items():
        folder = out / f"{log.eval.model.replace('/', '_')}-seed{seed}" / run_name
        if write_traces(log, folder):
            folders.append(folder)
    if not folders:
        raise ForgeError(f"no Claw-Eval traces in the logs under {logs_dir}")
    return folders
