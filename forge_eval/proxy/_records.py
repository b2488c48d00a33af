"""The records directory: its layout, and reading it back (`_writer` writes it).

Layout under the records directory: `<rollout_id>/<attempt>/calls.jsonl` (one `CallRecord` per line,
appended whole), `<rollout_id>/<attempt>/rollout.json` (the latest `RolloutRecord`, replaced atomically)
and an empty `released` file once the trainer dropped the rollout (a restarted proxy does not bring it
back; creating it again does, and removes the file). Directories are 0700 and files 0600: records hold
prompts, and rewards must not be editable by others. Only the last line of a `calls.jsonl` can be torn (a
write cut by a crash or a full disk, never acknowledged); readers skip and count it.
"""

import logging
from collections.abc import Iterator
from pathlib import Path

from pydantic import ValidationError

from forge_eval._errors import ForgeError
from forge_eval.proxy.records import CallRecord, RolloutRecord

CALLS_FILE = "calls.jsonl"
ROLLOUT_FILE = "rollout.json"
RELEASED_FILE = "released"
DIR_MODE, FILE_MODE = 0o700, 0o600

logger = logging.getLogger(__name__)


def attempt_dir(root: Path, rollout_id: str, attempt: int) -> Path:
    return root / rollout_id / str(attempt)


def load_calls(path: Path) -> tuple[list[CallRecord], int]:
    """The call records of one `calls.jsonl`, and how many torn last lines were skipped (0 or 1).

    Only the last line can be torn (a write cut by a crash or a full disk, never acknowledged); a bad
    line anywhere else is damage the reader will not paper over.
    """
    if not path.exists():
        return [], 0
    records: list[CallRecord] = []
    with path.open("rb") as f:
        lines = [line for line in f if line.strip()]
    for number, line in enumerate(lines, 1):
        last = number == len(lines)
        if last and not line.endswith(b"\n"):
            return records, 1
        try:
            records.append(CallRecord.model_validate_json(line))
        except ValidationError as e:
            if last:
                return records, 1
            raise ForgeError(
                f"{path} line {number} is not a call record: {e.errors()[0]['msg']}",
                hint="the file was edited or damaged; restore it or move it out of the records directory",
            ) from None
    return records, 0


def read_calls(root: Path, rollout_id: str, attempt: int = 0) -> list[CallRecord]:
    """The call records of one rollout attempt, in the order they were written (a torn last line,
    never acknowledged to the harness, is skipped with a warning)."""
    path = attempt_dir(Path(root), rollout_id, attempt) / CALLS_FILE
    records, torn = load_calls(path)
    if torn:
        logger.warning("%s: skipped a torn last line (a write cut short)", path)
    return records


def read_rollout(root: Path, rollout_id: str, attempt: int = 0) -> RolloutRecord | None:
    """The latest rollout record of one attempt, or None when the proxy never saw it."""
    path = attempt_dir(Path(root), rollout_id, attempt) / ROLLOUT_FILE
    return RolloutRecord.model_validate_json(path.read_bytes()) if path.exists() else None


def iter_attempts(root: Path) -> Iterator[tuple[str, int]]:
    """(rollout_id, attempt) of every attempt with records under `root`."""
    for rollout in sorted(p for p in Path(root).iterdir() if p.is_dir()):
        attempts = [int(p.name) for p in rollout.iterdir() if p.name.isascii() and p.name.isdigit()]
        for attempt in sorted(attempts):
            yield rollout.name, attempt


def stored_attempt(
    root: Path, rollout_id: str, attempt: int
) -> tuple[RolloutRecord, list[CallRecord]] | None:
    """The record and calls of an attempt on disk (released or not), None when it was never created."""
    record = read_rollout(root, rollout_id, attempt)
    return None if record is None else (record, read_calls(root, rollout_id, attempt))


def unreleased_attempts(root: Path) -> Iterator[tuple[RolloutRecord, list[CallRecord]]]:
    """The rollouts a proxy was serving when it stopped (not released), with their calls."""
    for rollout_id, attempt in iter_attempts(root):
        directory = attempt_dir(Path(root), rollout_id, attempt)
        record = read_rollout(root, rollout_id, attempt)
        if record is not None and not (directory / RELEASED_FILE).exists():
            yield record, read_calls(root, rollout_id, attempt)
