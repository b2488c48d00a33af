"""Where call and rollout records go: append-only JSONL per rollout attempt, written by one thread.

Layout under the records directory: `<rollout_id>/<attempt>/calls.jsonl` (one `CallRecord` per line,
appended with O_APPEND so a line is in the kernel the moment `write` returns and survives a `kill -9`) and
`<rollout_id>/<attempt>/rollout.json` (the latest `RolloutRecord`, replaced atomically).
The server awaits the write of a call's record before it sends the last bytes of that call's response,
without blocking its event loop, so a delivered response always has its record on disk.
"""

import asyncio
import os
import queue
import threading
from collections.abc import Iterator
from pathlib import Path

from forge_eval.training.records import CallRecord, RolloutRecord

CALLS_FILE = "calls.jsonl"
ROLLOUT_FILE = "rollout.json"


def attempt_dir(root: Path, rollout_id: str, attempt: int) -> Path:
    return root / rollout_id / str(attempt)


class RecordWriter:
    """A background thread that appends records; `await write_call(...)` returns once it is written."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self._queue: queue.SimpleQueue[tuple | None] = queue.SimpleQueue()
        self._fds: dict[Path, int] = {}
        self._thread = threading.Thread(target=self._run, name="forge-proxy-records", daemon=True)
        self._thread.start()

    async def write_call(self, record: CallRecord) -> None:
        """Append one call record; resolves when the line is in the kernel (safe from a process kill)."""
        loop = asyncio.get_running_loop()
        done: asyncio.Future[None] = loop.create_future()
        path = attempt_dir(self.root, record.rollout_id, record.attempt_id) / CALLS_FILE
        self._queue.put((path, record, loop, done))
        await done

    async def write_rollout(self, record: RolloutRecord) -> None:
        """Replace the rollout's record (write to a temporary file, then rename)."""
        loop = asyncio.get_running_loop()
        done: asyncio.Future[None] = loop.create_future()
        path = attempt_dir(self.root, record.rollout_id, record.attempt) / ROLLOUT_FILE
        self._queue.put((path, record.model_copy(deep=True), loop, done))
        await done

    def close(self) -> None:
        """Write what is queued, then stop the thread and close the files."""
        self._queue.put(None)
        self._thread.join(timeout=10)

    def _run(self) -> None:
        while (item := self._queue.get()) is not None:
            path, record, loop, done = item
            try:
                if path.name == CALLS_FILE:
                    os.write(self._fd(path), (record.model_dump_json() + "\n").encode())
                else:
                    path.parent.mkdir(parents=True, exist_ok=True)
                    tmp = path.with_suffix(".tmp")
                    tmp.write_bytes(record.model_dump_json(indent=1).encode())
                    os.replace(tmp, path)
            except OSError as e:
                loop.call_soon_threadsafe(_settle, done, e)
            else:
                loop.call_soon_threadsafe(_settle, done, None)
        for fd in self._fds.values():
            os.close(fd)

    def _fd(self, path: Path) -> int:
        fd = self._fds.get(path)
        if fd is None:
            path.parent.mkdir(parents=True, exist_ok=True)
            if len(self._fds) >= 512:  # bound open files: close the oldest
                os.close(self._fds.pop(next(iter(self._fds))))
            fd = self._fds[path] = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        return fd


def _settle(done: "asyncio.Future[None]", error: OSError | None) -> None:
    if done.done():
        return
    if error is None:
        done.set_result(None)
    else:
        done.set_exception(error)


def read_calls(root: Path, rollout_id: str, attempt: int = 0) -> list[CallRecord]:
    """The call records of one rollout attempt, in the order they were written."""
    path = attempt_dir(Path(root), rollout_id, attempt) / CALLS_FILE
    if not path.exists():
        return []
    return [CallRecord.model_validate_json(line) for line in _lines(path)]


def read_rollout(root: Path, rollout_id: str, attempt: int = 0) -> RolloutRecord | None:
    """The latest rollout record of one attempt, or None when the proxy never saw it."""
    path = attempt_dir(Path(root), rollout_id, attempt) / ROLLOUT_FILE
    return RolloutRecord.model_validate_json(path.read_bytes()) if path.exists() else None


def iter_attempts(root: Path) -> Iterator[tuple[str, int]]:
    """(rollout_id, attempt) of every attempt with records under `root`."""
    for rollout in sorted(p for p in Path(root).iterdir() if p.is_dir()):
        for attempt in sorted((p for p in rollout.iterdir() if p.name.isdigit()), key=lambda p: int(p.name)):
            yield rollout.name, int(attempt.name)


def _lines(path: Path) -> Iterator[bytes]:
    """Complete lines only: a line cut by a crash mid-write has no newline and is skipped."""
    with path.open("rb") as f:
        for line in f:
            if line.endswith(b"\n") and line.strip():
                yield line
