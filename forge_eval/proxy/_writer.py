"""Writing call and rollout records: inline on the caller's event loop, with group-committed fsync.

A call record is one `os.write` (O_APPEND) of its JSON line, made on the event loop that serves the call:
about 10 µs into the page cache, where a thread hand-off per call (two wake-ups and a GIL transfer) cost
more than the write and capped the proxy near 1,000 calls/s. Two durability modes (`DURABILITY`):

- `page-cache` (default): the answer goes out once the whole line is in the kernel. A `kill -9` or a crash
  of the proxy loses nothing acknowledged; a power loss or kernel crash can lose the last seconds.
- `fsync`: the answer also waits for the line to reach the disk. Concurrent calls share one `fdatasync`
  per file (group commit, on a syncing thread): calls that arrive while a sync runs go into the next one.
  Rollout records, release marks and new files' directory entries are synced too. A failed sync fails
  the calls that waited for it (their lines may stay in the file, like those of a client that hung up).

`os.write` may write less than asked (a full disk, a file-size limit), so the writer loops, and on failure
cuts the file back to where the line began, so one failed call never tears the lines after it. Any error
fails only the call whose record it was; `problem()` says what went wrong until a write succeeds again or
`recheck()` finds that the failed write would now fit (space was freed). A lock makes the writer safe to
share between event loops (the data and control planes may run on different ones).
"""

import asyncio
import contextlib
import errno
import logging
import os
import shutil
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import orjson
from pydantic import BaseModel

from forge_eval.proxy._records import (
    CALLS_FILE,
    DIR_MODE,
    FILE_MODE,
    RELEASED_FILE,
    ROLLOUT_FILE,
    attempt_dir,
)
from forge_eval.proxy.records import CallRecord, RolloutRecord

Durability = Literal["page-cache", "fsync"]
DURABILITY: dict[str, str] = {
    "page-cache": "answered once its record is in the kernel: safe from kill -9, not from power loss",
    "fsync": "answered once its record is on disk (group-committed fdatasync): safe from power loss",
}
PROBE_FILE = ".write-probe"
MAX_OPEN = 512

logger = logging.getLogger(__name__)


class RecordWriteError(Exception):
    """A record could not be written; the call it belongs to must not be acknowledged."""


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        if written <= 0:
            raise OSError(errno.ENOSPC, "the file system accepted no more bytes")
        view = view[written:]


def _make_dirs(directory: Path) -> bool:
    """`<rollout>/<attempt>`, both 0700 (`mkdir(parents=True)` would give the parent the umask's mode);
    True when either is new."""
    made = False
    for path in (directory.parent, directory):
        with contextlib.suppress(FileExistsError):
            path.mkdir(mode=DIR_MODE)
            made = True
    return made


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


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _unlink(path: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)


def _plain(value: object) -> object:
    if isinstance(value, BaseModel):  # an UpstreamFailure inside a call record's dict
        return value.model_dump()
    raise TypeError(f"{type(value).__name__} is not JSON")


def call_line(record: CallRecord | Mapping[str, Any]) -> bytes:
    """One JSONL line of a call record, given as the model or as its fields (the proxy's own calls: their
    upstream fields are checked where the answer comes in, see `_call`). orjson writes 12 KB in ~13 µs;
    what it cannot hold (an integer beyond 64 bits) goes through pydantic, which also refuses what JSON
    cannot hold at all (a lone surrogate): `RecordWriteError`."""
    fields = record.model_dump() if isinstance(record, BaseModel) else record
    try:
        return orjson.dumps(fields, default=_plain, option=orjson.OPT_APPEND_NEWLINE)
    except TypeError:
        pass
    try:
        model = record if isinstance(record, CallRecord) else CallRecord.model_validate(record)
        return (model.model_dump_json() + "\n").encode()
    except ValueError as e:
        raise RecordWriteError(f"the record could not be serialized: {type(e).__name__}: {e}") from None


@dataclass
class _Batch:
    """What the next group commit makes durable: one duplicate descriptor per file (the writer may close
    its own meanwhile), jobs in order, and who waits for which of them."""

    files: dict[tuple[str, int], int] = field(default_factory=dict)
    jobs: list[Callable[[], None]] = field(default_factory=list)
    waiters: list[tuple[asyncio.AbstractEventLoop, "asyncio.Future[None]", tuple | None, int | None]] = field(
        default_factory=list
    )


class _GroupSync:
    """A thread that makes batches durable; every wake-up takes all that was submitted since the last.

    A waiter fails only with what it depends on (its file's sync, its job), never with another call's
    error. `failed` hears about every failure (the writer's `problem()`)."""

    def __init__(self, failed: Callable[[OSError], object]) -> None:
        self._failed = failed
        self._cond = threading.Condition()
        self._batch = _Batch()
        self._closed = False
        self._thread = threading.Thread(target=self._run, name="forge-proxy-fsync", daemon=True)
        self._thread.start()

    def alive(self) -> bool:
        return self._thread.is_alive()

    def submit(
        self, file: tuple[tuple[str, int], int] | None = None, job: Callable[[], None] | None = None
    ) -> "asyncio.Future[None]":
        """A future of the running loop that resolves once `file` (key, open fd) is synced and `job` ran."""
        loop = asyncio.get_running_loop()
        done: asyncio.Future[None] = loop.create_future()
        with self._cond:
            if self._closed:
                raise RecordWriteError("the record writer is closed (the proxy is shutting down)")
            batch = self._batch
            key = None
            if file is not None:
                key, fd = file
                if key not in batch.files:
                    batch.files[key] = os.dup(fd)
            index = None
            if job is not None:
                index = len(batch.jobs)
                batch.jobs.append(job)
            batch.waiters.append((loop, done, key, index))
            self._cond.notify()
        return done

    def close(self) -> None:
        """Commit what was submitted, then stop."""
        with self._cond:
            self._closed = True
            self._cond.notify()
        self._thread.join(timeout=30)

    def _run(self) -> None:
        while True:
            with self._cond:
                while not (self._batch.waiters or self._closed):
                    self._cond.wait()
                batch, self._batch = self._batch, _Batch()
                last = self._closed
            file_errors, job_errors = self._commit(batch)
            by_loop: dict[asyncio.AbstractEventLoop, list[tuple[asyncio.Future[None], Exception | None]]] = {}
            for loop, done, key, index in batch.waiters:
                error = file_errors.get(key) or job_errors.get(index)
                by_loop.setdefault(loop, []).append((done, error))
            for loop, settled in by_loop.items():  # one wake-up per event loop for the whole batch
                with contextlib.suppress(RuntimeError):  # that loop is gone; nobody waits any more
                    loop.call_soon_threadsafe(_settle, settled)
            if last:
                return

    def _commit(self, batch: _Batch) -> tuple[dict, dict]:
        file_errors: dict[tuple[str, int], Exception] = {}
        job_errors: dict[int, Exception] = {}
        for key, fd in batch.files.items():
            try:
                os.fdatasync(fd)
            except OSError as e:
                file_errors[key] = RecordWriteError(f"syncing records under {key[0]}/{key[1]} failed: {e}")
                self._failed(e)
            finally:
                os.close(fd)
        for index, job in enumerate(batch.jobs):
            try:
                job()
            except OSError as e:
                job_errors[index] = self._failed(e)
        return file_errors, job_errors


def _settle(settled: list[tuple["asyncio.Future[None]", Exception | None]]) -> None:
    for done, error in settled:
        if done.done():
            continue
        if error is None:
            done.set_result(None)
        else:
            done.set_exception(error)


class RecordWriter:
    """Appends call records and replaces rollout records under `root` (see the module doc).

    Args:
        root: The records directory.
        durability: `page-cache` or `fsync` (`DURABILITY` says what each protects against).
    """

    def __init__(self, root: Path, durability: Durability = "page-cache") -> None:
        if durability not in DURABILITY:
            raise ValueError(f"unknown durability {durability!r}; choose one of {sorted(DURABILITY)}")
        self.root = Path(root)
        self.durability = durability
        self.root.mkdir(parents=True, exist_ok=True, mode=DIR_MODE)
        self._lock = threading.Lock()
        self._fds: dict[tuple[str, int], int] = {}  # least recently written first
        self._io_error: str | None = None
        self._failed: tuple[int, int] = (0, 0)  # (offset, size) of the last failed write
        self._closed = False
        self._sync = _GroupSync(self._failure) if durability == "fsync" else None

    def problem(self) -> str | None:
        """Why the writer cannot take records now, or None while it works."""
        if self._closed:
            return "the record writer is closed (the proxy is shutting down)"
        if self._sync is not None and not self._sync.alive():
            return "the record writer's fsync thread stopped"
        return self._io_error

    def recheck(self) -> str | None:
        """`problem()`, after trying again the growth that failed (space freed, a limit raised): a
        sparse probe file in the records directory is given the failed write's size at its offset."""
        if self._io_error is None or self._closed:
            return self.problem()
        offset, size = self._failed
        path = self.root / PROBE_FILE
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, FILE_MODE)
            try:
                os.posix_fallocate(fd, offset, max(size, 1))
            finally:
                os.close(fd)
                os.unlink(path)
        except OSError:
            return self.problem()
        self._io_error = None
        return self.problem()

    async def write_call(self, record: CallRecord | Mapping[str, Any]) -> None:
        """Append one call record (see `call_line`); returns once it is as durable as the mode promises."""
        data = call_line(record)
        key = (
            (record["rollout_id"], record["attempt_id"])
            if isinstance(record, Mapping)
            else (
                record.rollout_id,
                record.attempt_id,
            )
        )
        with self._lock:
            self._refuse_if_closed()
            try:
                fd, opened = self._fd(key)
                self._append(key, fd, data)
            except OSError as e:
                raise self._failure(e) from None
            self._io_error = None
            if self._sync is None:
                return
            directory = attempt_dir(self.root, *key)
            new_file = (lambda: self._synced_entry(directory, made=True)) if opened else None
            synced = self._sync.submit((key, fd), new_file)
        await synced

    async def write_rollout(self, record: RolloutRecord) -> None:
        """Replace the rollout's record (a temporary file renamed over it)."""
        path = attempt_dir(self.root, record.rollout_id, record.attempt) / ROLLOUT_FILE
        data = record.model_dump_json(indent=1).encode()
        await self._do(lambda: self._replace(path, data))

    async def release(self, record: RolloutRecord) -> None:
        """Write the rollout's last record and mark it released (records stay; a restart skips it)."""
        await self.write_rollout(record)
        path = attempt_dir(self.root, record.rollout_id, record.attempt) / RELEASED_FILE
        await self._do(lambda: self._touch(path))

    async def reopen(self, rollout_id: str, attempt: int) -> None:
        """Undo a release: the attempt is served again, and resumed after a restart."""
        path = attempt_dir(self.root, rollout_id, attempt) / RELEASED_FILE
        await self._do(lambda: self._remove_file(path))

    async def purge(self, rollout_id: str, attempt: int) -> None:
        """Delete an attempt's records (its file is closed first; a later call writes a new one)."""
        with self._lock:
            self._forget((rollout_id, attempt))
        directory = attempt_dir(self.root, rollout_id, attempt)
        await self._do(lambda: self._remove_tree(directory))

    def close(self) -> None:
        """Sync what is pending (fsync mode), then close the files; later writes are refused."""
        with self._lock:
            self._closed = True
        if self._sync is not None:
            self._sync.close()
        with self._lock:
            for key in list(self._fds):
                self._forget(key)

    async def _do(self, action: Callable[[], None]) -> None:
        """Run a file-system change: inline (page-cache), or in order on the syncing thread (fsync)."""
        with self._lock:
            self._refuse_if_closed()
            if self._sync is None:
                try:
                    action()
                except OSError as e:
                    raise self._failure(e) from None
                self._io_error = None
                return
            synced = self._sync.submit(job=action)
        await synced

    def _refuse_if_closed(self) -> None:
        if self._closed:
            raise RecordWriteError("the record writer is closed (the proxy is shutting down)")

    def _failure(self, error: OSError) -> RecordWriteError:
        """Remember what failed (for `problem()`); the error to fail the call with."""
        self._io_error = f"writing records under {self.root} failed: {error}"
        return RecordWriteError(self._io_error)

    def _append(self, key: tuple[str, int], fd: int, data: bytes) -> None:
        """Where the line began is asked of the file only when a write fails: the end of the file less
        what was written (O_APPEND, one writer per file), not with an `lseek` before every line."""
        written = 0
        try:
            while written < len(data):
                step = os.write(fd, data[written:] if written else data)
                if step <= 0:
                    raise OSError(errno.ENOSPC, "the file system accepted no more bytes")
                written += step
        except OSError:
            self._failed = (0, len(data))
            try:
                start = os.lseek(fd, 0, os.SEEK_END) - written
                self._failed = (start, len(data))
                os.ftruncate(fd, start)  # no torn line in front of the next record
            except OSError:
                self._forget(key)  # reopening cuts the torn tail (see _fd)
            raise

    def _replace(self, path: Path, data: bytes) -> None:
        # by hand rather than forge_eval._files.write_text: fsync mode syncs the content before the rename
        made = _make_dirs(path.parent)
        tmp = path.with_name(f".{path.name}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, FILE_MODE)
        try:
            try:
                _write_all(fd, data)
                if self._sync is not None:
                    os.fdatasync(fd)  # the content is on disk before the name points at it
            finally:
                os.close(fd)
            os.replace(tmp, path)
        except OSError:
            self._failed = (0, len(data))
            _unlink(tmp)
            raise
        self._synced_entry(path.parent, made)

    def _touch(self, path: Path) -> None:
        made = _make_dirs(path.parent)
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT, FILE_MODE))
        self._synced_entry(path.parent, made)

    def _remove_file(self, path: Path) -> None:
        _unlink(path)
        self._synced_entry(path.parent)

    def _remove_tree(self, directory: Path) -> None:
        shutil.rmtree(directory, ignore_errors=True)
        if directory.parent.exists():
            self._synced_entry(directory.parent)

    def _synced_entry(self, directory: Path, made: bool = False) -> None:
        """fsync mode: make the names in `directory` durable; when `made` (it was just created), also the
        directories above it up to the root."""
        if self._sync is None:
            return
        _fsync_dir(directory)
        while made and directory != self.root and self.root in directory.parents:
            directory = directory.parent
            _fsync_dir(directory)

    def _forget(self, key: tuple[str, int]) -> None:
        fd = self._fds.pop(key, None)
        if fd is not None:
            os.close(fd)

    def _fd(self, key: tuple[str, int]) -> tuple[int, bool]:
        """The open calls file of an attempt (most recently used last), and whether it was just opened."""
        fd = self._fds.pop(key, None)
        opened = fd is None
        if fd is None:
            directory = attempt_dir(self.root, *key)
            _make_dirs(directory)
            if len(self._fds) >= MAX_OPEN:  # bound open files: close the least recently written
                self._forget(next(iter(self._fds)))
            fd = os.open(directory / CALLS_FILE, os.O_RDWR | os.O_APPEND | os.O_CREAT, FILE_MODE)
            dropped = _cut_torn_tail(fd)
            if dropped:
                logger.warning(
                    "%s ended in an unfinished record; cut %d bytes", directory / CALLS_FILE, dropped
                )
        self._fds[key] = fd
        return fd, opened
