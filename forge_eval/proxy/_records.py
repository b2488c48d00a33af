"""Where call and rollout records go: append-only JSONL per rollout attempt, written by one thread.

Layout under the records directory: `<rollout_id>/<attempt>/calls.jsonl` (one `CallRecord` per line,
appended with O_APPEND so a line is in the kernel the moment `write` returns and survives a `kill -9`),
`<rollout_id>/<attempt>/rollout.json` (the latest `RolloutRecord`, replaced atomically) and an empty
`released` file once the trainer dropped the rollout (a restarted proxy does not bring it back; creating
it again does, and removes the file).
Directories are 0700 and files 0600: records hold prompts, and rewards must not be editable by others.

A call is acknowledged only once its whole line is written: `os.write` may write less than asked (a full
disk, a file-size limit), so the writer loops, and on failure cuts the file back to where the line began,
so one failed call never tears the lines after it. Any error fails only the call whose record it was; the
thread keeps running and `problem()` says what went wrong until a write succeeds again or `recheck()`
finds that the failed write would now fit (space was freed).
"""

import asyncio
import contextlib
import errno
import logging
import os
import queue
import shutil
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

from pydantic import BaseModel, ValidationError

from forge_eval._errors import ForgeError
from forge_eval.proxy.records import CallRecord, RolloutRecord

CALLS_FILE = "calls.jsonl"
ROLLOUT_FILE = "rollout.json"
RELEASED_FILE = "released"
PROBE_FILE = ".write-probe"
_DIR_MODE, _FILE_MODE = 0o700, 0o600
_MAX_OPEN = 512

logger = logging.getLogger(__name__)


class RecordWriteError(Exception):
    """A record could not be written; the call it belongs to must not be acknowledged."""


def attempt_dir(root: Path, rollout_id: str, attempt: int) -> Path:
    return root / rollout_id / str(attempt)


def _make_dirs(directory: Path) -> None:
    """`<rollout>/<attempt>`, both 0700 (`mkdir(parents=True)` would give the parent the umask's mode)."""
    directory.parent.mkdir(exist_ok=True, mode=_DIR_MODE)
    directory.mkdir(exist_ok=True, mode=_DIR_MODE)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        if written <= 0:
            raise OSError(errno.ENOSPC, "the file system accepted no more bytes")
        view = view[written:]


def _cut_torn_tail(fd: int) -> int:
    """Drop an unterminated last line (a write cut by a crash); returns the bytes dropped."""
    size = os.fstat(fd).st_size
    end = size
    while end > 0:
        start = max(0, end - 65536)
        chunk = os.pread(fd, end - start, start)
        newline = chunk.rfind(b"\n")
        if newline >= 0:
            keep = start + newline + 1
            break
        end = start
    else:
        keep = 0
    if keep < size:
        os.ftruncate(fd, keep)
    return size - keep


class RecordWriter:
    """A background thread that writes records; `await write_call(...)` returns once it is written."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True, mode=_DIR_MODE)
        self._queue: queue.SimpleQueue[tuple | None] = queue.SimpleQueue()
        self._fds: dict[Path, int] = {}
        self._io_error: str | None = None
        self._failed: tuple[int, int] = (0, 0)  # (offset, size) of the last failed write
        self._closed = False
        self._thread = threading.Thread(target=self._run, name="forge-proxy-records", daemon=True)
        self._thread.start()

    def problem(self) -> str | None:
        """Why the writer cannot take records now, or None while it works."""
        if self._closed:
            return "the record writer is closed (the proxy is shutting down)"
        if not self._thread.is_alive():
            return "the record writer thread stopped"
        return self._io_error

    def recheck(self) -> str | None:
        """`problem()`, after trying again the growth that failed (space freed, a limit raised): a
        sparse probe file in the records directory is given the failed write's size at its offset."""
        if self._io_error is None or self._closed:
            return self.problem()
        offset, size = self._failed
        path = self.root / PROBE_FILE
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, _FILE_MODE)
            try:
                os.posix_fallocate(fd, offset, max(size, 1))
            finally:
                os.close(fd)
                os.unlink(path)
        except OSError:
            return self.problem()
        self._io_error = None
        return self.problem()

    async def write_call(self, record: CallRecord) -> None:
        """Append one call record; resolves when the whole line is in the kernel (safe from a kill)."""
        path = attempt_dir(self.root, record.rollout_id, record.attempt_id) / CALLS_FILE
        await self._submit(lambda: self._append(path, record))

    async def write_rollout(self, record: RolloutRecord) -> None:
        """Replace the rollout's record (write to a temporary file, then rename)."""
        path = attempt_dir(self.root, record.rollout_id, record.attempt) / ROLLOUT_FILE
        snapshot = record.model_copy(deep=True)
        await self._submit(lambda: self._replace(path, snapshot))

    async def release(self, record: RolloutRecord) -> None:
        """Write the rollout's last record and mark it released (records stay; a restart skips it)."""
        await self.write_rollout(record)
        directory = attempt_dir(self.root, record.rollout_id, record.attempt)
        await self._submit(lambda: self._touch(directory / RELEASED_FILE))

    async def reopen(self, rollout_id: str, attempt: int) -> None:
        """Undo a release: the attempt is served again, and resumed after a restart."""
        path = attempt_dir(self.root, rollout_id, attempt) / RELEASED_FILE
        await self._submit(lambda: _unlink(path))

    async def purge(self, rollout_id: str, attempt: int) -> None:
        """Delete an attempt's records, after the writes queued before it (its files are closed first)."""
        directory = attempt_dir(self.root, rollout_id, attempt)
        await self._submit(lambda: self._remove(directory))

    def close(self) -> None:
        """Write what is queued, then stop the thread and close the files."""
        if not self._closed:
            self._closed = True
            self._queue.put(None)
        self._thread.join(timeout=10)

    async def _submit(self, action: Callable[[], None]) -> None:
        problem = self.problem()
        if problem is not None and (self._closed or not self._thread.is_alive()):
            raise RecordWriteError(problem)
        loop = asyncio.get_running_loop()
        done: asyncio.Future[None] = loop.create_future()
        self._queue.put((action, loop, done))
        await done

    def _run(self) -> None:
        while (item := self._queue.get()) is not None:
            action, loop, done = item
            error: BaseException | None = None
            try:
                action()
            except OSError as e:
                self._io_error = f"writing records under {self.root} failed: {e}"
                error = RecordWriteError(self._io_error)
            except Exception as e:  # a record that cannot be serialized fails its call, not the writer
                error = RecordWriteError(f"the record could not be serialized: {type(e).__name__}: {e}")
            else:
                self._io_error = None
            try:
                loop.call_soon_threadsafe(_settle, done, error)
            except RuntimeError:  # the caller's event loop is gone; nobody waits for this one
                logger.warning("a record was written for a caller whose event loop closed")
        for fd in self._fds.values():
            os.close(fd)
        self._fds.clear()

    def _append(self, path: Path, record: BaseModel) -> None:
        data = (record.model_dump_json() + "\n").encode()
        fd = self._fd(path)
        start = os.lseek(fd, 0, os.SEEK_END)
        try:
            _write_all(fd, data)
        except OSError:
            self._failed = (start, len(data))
            try:
                os.ftruncate(fd, start)  # no torn line in front of the next record
            except OSError:
                self._forget(path)  # reopening cuts the torn tail (see _fd)
            raise

    def _replace(self, path: Path, record: BaseModel) -> None:
        data = record.model_dump_json(indent=1).encode()
        _make_dirs(path.parent)
        tmp = path.with_suffix(".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, _FILE_MODE)
        try:
            _write_all(fd, data)
        except OSError:
            self._failed = (0, len(data))
            raise
        finally:
            os.close(fd)
        os.replace(tmp, path)

    def _touch(self, path: Path) -> None:
        _make_dirs(path.parent)
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT, _FILE_MODE))

    def _remove(self, directory: Path) -> None:
        for path in [p for p in self._fds if p.parent == directory]:
            self._forget(path)
        shutil.rmtree(directory, ignore_errors=True)

    def _forget(self, path: Path) -> None:
        fd = self._fds.pop(path, None)
        if fd is not None:
            os.close(fd)

    def _fd(self, path: Path) -> int:
        fd = self._fds.get(path)
        if fd is not None and os.fstat(fd).st_nlink == 0:  # deleted under us: write to the new file
            self._forget(path)
            fd = None
        if fd is None:
            _make_dirs(path.parent)
            if len(self._fds) >= _MAX_OPEN:  # bound open files: close the oldest
                self._forget(next(iter(self._fds)))
            fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, _FILE_MODE)
            dropped = _cut_torn_tail(fd)
            if dropped:
                logger.warning("%s ended in an unfinished record; cut %d bytes", path, dropped)
            self._fds[path] = fd
        return fd


def _unlink(path: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)


def _settle(done: "asyncio.Future[None]", error: BaseException | None) -> None:
    if done.done():
        return
    if error is None:
        done.set_result(None)
    else:
        done.set_exception(error)


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
