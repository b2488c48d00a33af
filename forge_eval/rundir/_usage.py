"""The usage ledger: what every sample attempt of a run cost, kept across retries and resumes.

Inspect's eval_set removes a retried task's older logs once the retry has run, and the retry's log keeps
only the surviving attempt of each sample, so tokens spent on an attempt that errored would vanish from
the logs. The runner therefore copies every attempt it finds in its log folder into this ledger before
each eval_set call and when it summarizes; rows are keyed by the attempt (sample uuid and start time),
so a completed sample that a retry log carries over is counted once.

One ledger per log folder (a shard on a cluster writes its own, which comes back with its logs); the
name ends in `.jsonl` so that Inspect's log listing (`*.eval`, `*.json`) never takes it for a log.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from forge_eval._errors import ForgeError
from forge_eval._files import write_text

#: The ledger's file name in a log folder: one JSON object per line, one line per sample attempt.
USAGE_LEDGER = "usage-ledger.jsonl"
#: What identifies an attempt (the same attempt found in two logs is one attempt).
USAGE_KEY = "attempt"
_HINT = (
    f"{USAGE_LEDGER} is written by `forge-eval run`; move the damaged file away and re-run the same command "
    "(attempts still in the logs are recorded again; those only in the damaged file are lost)"
)


def read_usage_ledger(log_dir: str | os.PathLike[str]) -> dict[str, dict[str, Any]]:
    """Every attempt recorded in the ledgers under `log_dir` (shards' folders included), by key.

    Raises:
        ForgeError: a ledger line is not a JSON object with a key (the file was edited or torn).
    """
    rows: dict[str, dict[str, Any]] = {}
    for path in sorted(Path(log_dir).rglob(USAGE_LEDGER)):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            try:
                row = json.loads(line)
            except json.JSONDecodeError as e:
                raise ForgeError(f"{path} line {number} is not JSON: {e}", _HINT) from None
            if not isinstance(row, dict) or USAGE_KEY not in row:
                raise ForgeError(f"{path} line {number} is not an attempt with an '{USAGE_KEY}' key", _HINT)
            rows.setdefault(str(row[USAGE_KEY]), row)
    return rows


def write_usage_ledger(folder: str | os.PathLike[str], rows: dict[str, dict[str, Any]]) -> Path:
    """Write `folder`'s ledger with `rows` (atomically, sorted by key: the same rows give the same file)."""
    text = "".join(json.dumps(rows[key], sort_keys=True) + "\n" for key in sorted(rows))
    return write_text(Path(folder) / USAGE_LEDGER, text)
