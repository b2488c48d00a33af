"""The proxy's call records of a run, as per-turn tool-call parse verdicts.

Inspect keeps the raw model response (where the embedded model server writes
`"forge": {"tool_parse": "failed"}`) only for the first calls of a sample unless `log_model_api=True`;
the proxy records every response in full. Records live in `<records>/<rollout_id>/<attempt>/` as
`calls.jsonl` (CallRecord lines) and `rollout.json` (RolloutRecord); a rollout is matched to its
Inspect sample by the RolloutRecord's `task_id`, `seed` and `epoch` (filled by `forge-eval run`).
"""

import json
from pathlib import Path
from typing import Any

from forge_eval.proxy.records import CallRecord, RolloutRecord

CALLS_FILE = "calls.jsonl"
ROLLOUT_FILE = "rollout.json"

RolloutKey = tuple[str, int, int]


def parse_failed(response: dict[str, Any] | None) -> bool:
    """Whether a model response carries the embedded server's tool-call parse failure marker."""
    forge = (response or {}).get("forge")
    return isinstance(forge, dict) and forge.get("tool_parse") == "failed"


def _latest_attempts(records_dir: Path) -> list[Path]:
    latest: dict[Path, Path] = {}
    for rollout in sorted(records_dir.glob(f"*/*/{ROLLOUT_FILE}")):
        attempt_dir, rollout_dir = rollout.parent, rollout.parent.parent
        known = latest.get(rollout_dir)
        if known is None or int(attempt_dir.name) > int(known.name):
            latest[rollout_dir] = attempt_dir
    return list(latest.values())


def read_parse_verdicts(records_dir: str | Path) -> dict[RolloutKey, list[bool]]:
    """(task_id, seed, epoch) -> per delivered model call, in `seq` order: did its tool-call parse fail?

    Rollouts without a `task_id` cannot be matched to a sample and are left out; of a retried rollout,
    the latest attempt counts.
    """
    found: dict[RolloutKey, list[bool]] = {}
    for attempt in _latest_attempts(Path(records_dir)):
        rollout = RolloutRecord.model_validate_json((attempt / ROLLOUT_FILE).read_text())
        if rollout.task_id is None:
            continue
        key = (rollout.task_id, rollout.seed or 0, rollout.epoch or 1)
        calls_path = attempt / CALLS_FILE
        lines = calls_path.read_text().splitlines() if calls_path.is_file() else []
        calls = sorted(
            (CallRecord.model_validate(json.loads(line)) for line in lines if line), key=lambda c: c.seq
        )
        found[key] = [parse_failed(c.upstream_response) or parse_failed(c.returned_response) for c in calls]
    return found
