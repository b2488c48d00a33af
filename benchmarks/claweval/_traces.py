"""A run's Claw-Eval traces in upstream's layout, for upstream's own `score_summary.py`.

Each sample's store keeps the trace upstream's runner wrote and its grader completed (`TRACE_KEY`). This
writes them as `claw-eval batch` leaves them, `<out>/<model>/<run>/<task_id>_<trace id[:8]>.jsonl`, so that
`python score_summary.py <out>` in the tree summarizes them with upstream's pass line and trial padding
(missing trials count as 0 up to its 3).
"""

from __future__ import annotations

import json
from pathlib import Path

from inspect_ai.log import list_eval_logs, read_eval_log

from forge_eval._errors import ForgeError
from forge_eval.benchmarks.claweval._trial import TRACE_KEY


def export_traces(logs_dir: Path, out: Path, run_name: str = "forge-eval") -> Path:
    """Write every Claw-Eval trace of the Inspect logs under `logs_dir` into `out`; returns the folder of
    the traces (`<out>/<model>/<run_name>`).

    Raises:
        ForgeError: no Claw-Eval trace in the logs.
    """
    written = 0
    folder = out
    for info in list_eval_logs(str(logs_dir), recursive=True):
        log = read_eval_log(info)
        folder = out / log.eval.model.replace("/", "_") / run_name
        for sample in log.samples or []:
            trace = sample.store.get(TRACE_KEY)
            if not trace:
                continue
            first = json.loads(trace.splitlines()[0])
            folder.mkdir(parents=True, exist_ok=True)
            (folder / f"{sample.id}_{first['trace_id'][:8]}.jsonl").write_text(trace, encoding="utf-8")
            written += 1
    if not written:
        raise ForgeError(f"no Claw-Eval traces in the logs under {logs_dir}")
    return folder
