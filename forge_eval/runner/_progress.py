"""Progress lines for runs whose output is not a terminal (CI logs, `nohup`, `make run > log`).

Inspect's live display needs a terminal; without one a run would print nothing until it ends, and a
slow run could not be told from a hung one. While a `RunProgress` is active, forge-eval prints to
stderr (so results piped from stdout stay clean) one line when a seed starts and ends, one per
finished sample (outcome, elapsed, samples done / total, ETA), one per failed model call that Inspect
retries, and, when none of those came for a while, one that names the sample that has been quiet
longest and what it waits for (a model call or a tool): a hung call shows, a slow run does not spam.

The lines come from Inspect's own hooks (task, sample, event and retry callbacks), not from polling
the logs; a watcher thread only looks for samples that have gone quiet.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from inspect_ai.event import ModelEvent, SpanBeginEvent
from inspect_ai.hooks import (
    Hooks,
    ModelRetry,
    SampleEnd,
    SampleEvent,
    SampleStart,
    TaskEnd,
    TaskStart,
    hooks,
)
from inspect_ai.log import EvalSample, list_eval_logs, read_eval_log, read_eval_log_sample_summaries
from inspect_ai.scorer import value_to_float

from forge_eval._status import duration, status

#: After this long without a line the longest-quiet sample is reported, then at twice that, and so on.
QUIET_AFTER = 60.0
_WATCH_INTERVAL = 1.0
_to_float = value_to_float()


def error_line(message: str) -> str:
    """A sample's error in one line: its first, except for Inspect's ModelGenerateError, whose message
    is the whole failed request with the provider's own error at the end."""
    wrapped = message.startswith("ModelGenerateError(")
    text = message.replace("\\\\n", "\n").replace("\\n", "\n").replace("\\", "")
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if not lines:
        return "error"
    return lines[-1].removesuffix("')") if wrapped else lines[0]


@dataclass
class _Sample:
    """A running sample as the watcher sees it."""

    seed: int | None
    task_id: str
    epoch: int
    last_event: float
    waiting_on_tool: bool = False


class RunProgress:
    """Counts finished samples of one `forge-eval run` and prints a line per step of it.

    Args:
        benchmark: Benchmark name, the first word of every line.
        total: Samples of the whole run (tasks x epochs x seeds).
        done_before: Samples an earlier, interrupted invocation of the same run already finished.
        threshold: A sample passes when its score is at least this.
        epochs: Epochs per task (the epoch is named in a line only when there are several).
        stream: Where the lines go (stderr by default).
        clock: Monotonic seconds (tests drive it by hand).
    """

    def __init__(
        self,
        benchmark: str,
        total: int,
        done_before: int = 0,
        threshold: float = 1.0,
        epochs: int = 1,
        stream: IO[str] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.benchmark = benchmark
        self.total = total
        self.done_before = done_before
        self.done_now = 0
        self.threshold = threshold
        self.epochs = epochs
        self.stream = stream
        self.clock = clock
        self.started = clock()
        self._seeds: dict[str, int | None] = {}  # eval id -> seed
        self._seed_started: dict[str, float] = {}
        self._tally: dict[str, dict[str, int]] = {}
        self._running: dict[str, _Sample] = {}  # sample uuid -> what the watcher needs
        self._last_news = self.started
        self._next_heartbeat = QUIET_AFTER
        self._lock = threading.Lock()

    # -- what the hooks report ---------------------------------------------------------------------

    def seed_started(self, eval_id: str, seed: int | None, samples: int) -> None:
        with self._lock:
            self._seeds[eval_id] = seed
            self._seed_started[eval_id] = self.clock()
            self._tally[eval_id] = {"passed": 0, "failed": 0, "errored": 0}
        self._print(f"{self._who(seed)}: started ({samples} samples)")

    def seed_finished(self, eval_id: str, status: str) -> None:
        with self._lock:
            seed = self._seeds.get(eval_id)
            took = self.clock() - self._seed_started.get(eval_id, self.started)
            tally = self._tally.get(eval_id, {})
        counts = ", ".join(f"{n} {what}" for what, n in tally.items())
        ended = "finished" if status == "success" else f"ended ({status})"
        self._print(f"{self._who(seed)}: {ended} after {duration(took)} ({counts})")

    def sample_started(self, uuid: str, eval_id: str, task_id: str, epoch: int) -> None:
        with self._lock:
            now = self.clock()
            self._running[uuid] = _Sample(self._seeds.get(eval_id), task_id, epoch, now)

    def sample_event(self, uuid: str, event: Any) -> None:
        with self._lock:
            sample = self._running.get(uuid)
            if sample is None:
                return
            sample.last_event = self.clock()
            # a tool runs between its span's begin and end; anything else is followed by a model call
            sample.waiting_on_tool = isinstance(event, SpanBeginEvent) and event.type == "tool"
            if isinstance(event, ModelEvent):
                sample.waiting_on_tool = False

    def sample_finished(self, uuid: str, eval_id: str, sample: EvalSample) -> None:
        outcome, kind = self._outcome(sample)
        with self._lock:
            self._running.pop(uuid, None)
            self.done_now += 1
            self._tally.setdefault(eval_id, {"passed": 0, "failed": 0, "errored": 0})[kind] += 1
            seed = self._seeds.get(eval_id)
            done = self.done_before + self.done_now
            elapsed = self.clock() - self.started
            remaining = max(0, self.total - done)
            eta = elapsed / self.done_now * remaining
        took = duration(sample.total_time) if sample.total_time is not None else "?"
        eta_text = "done" if remaining == 0 else f"ETA {duration(eta)}"
        who = self._who(seed, sample.id, sample.epoch)
        self._print(f"{who}: {outcome} in {took} · {done}/{self.total} samples · {eta_text}")

    def model_retry(self, uuid: str | None, retry: ModelRetry) -> None:
        with self._lock:
            sample = self._running.get(uuid) if uuid else None
            if sample is not None:  # reported here: the quiet clock starts again
                sample.last_event = self.clock()
            who = self._who(sample.seed, sample.task_id, sample.epoch) if sample else self.benchmark
        cause = retry.exception_type or "error"
        if retry.status_code is not None:
            cause += f", HTTP {retry.status_code}"
        self._print(
            f"{who}: a call to {retry.model_name} failed ({cause}); "
            f"retry {retry.attempt} in {duration(retry.wait_time)}"
        )

    def check_quiet(self) -> None:
        """When no line came for `QUIET_AFTER` s (then 2x, 4x, ...), name the sample quiet longest
        (if it has been quiet that long too: one that has just started waits for nothing yet)."""
        now = self.clock()
        with self._lock:
            silent = now - self._last_news
            sample = min(self._running.values(), key=lambda s: s.last_event, default=None)
            if sample is None or silent < self._next_heartbeat or now - sample.last_event < QUIET_AFTER:
                return
            self._next_heartbeat = 2 * silent
            who = self._who(sample.seed, sample.task_id, sample.epoch)
            waits = "a tool call" if sample.waiting_on_tool else "the model"
            running = len(self._running)
        self._print(
            f"{who}: waiting {duration(now - sample.last_event)} for {waits} "
            f"({running} sample{'s' if running > 1 else ''} running, nothing new for {duration(silent)})",
            news=False,
        )

    # -- formatting --------------------------------------------------------------------------------

    def _who(self, seed: int | None, task_id: object = None, epoch: int | None = None) -> str:
        who = f"{self.benchmark} seed {seed}"
        if task_id is not None:
            who += f" · {task_id}"
            if self.epochs > 1 and epoch is not None:
                who += f" (epoch {epoch})"
        return who

    def _outcome(self, sample: EvalSample) -> tuple[str, str]:
        if sample.error is not None:
            return f"error ({error_line(sample.error.message)[:160]})", "errored"
        limit = f", {sample.limit.type} limit reached" if sample.limit is not None else ""
        if not sample.scores:
            return f"not scored{limit}", "failed"
        score = _to_float(next(iter(sample.scores.values())).value)
        if score >= self.threshold:
            return f"passed{limit}", "passed"
        return f"failed (score {score:.2f}{limit})", "failed"

    def _print(self, line: str, news: bool = True) -> None:
        """Print a line; `news` (all but the quiet-sample line) restarts the quiet clock."""
        if news:
            with self._lock:
                self._last_news = self.clock()
                self._next_heartbeat = QUIET_AFTER
        status(line, self.stream)


_active: RunProgress | None = None
_registered = False


class _ProgressHooks(Hooks):
    """Feeds the active `RunProgress`; does nothing (is disabled) outside `run_progress`.

    Registered on first use, not at import: Inspect prints a banner listing the hooks registered when
    it first builds a model, and this one has nothing to say before a run without a terminal starts.
    """

    def enabled(self) -> bool:
        return _active is not None

    async def on_task_start(self, data: TaskStart) -> None:
        if _active is not None:
            config = data.spec.config
            per_seed = _limited(data.spec.dataset.samples or 0, config.limit) * (config.epochs or 1)
            _active.seed_started(data.eval_id, data.spec.task_args.get("seed"), per_seed)

    async def on_task_end(self, data: TaskEnd) -> None:
        if _active is not None:
            _active.seed_finished(data.eval_id, data.log.status)

    async def on_sample_start(self, data: SampleStart) -> None:
        if _active is not None:
            _active.sample_started(data.sample_id, data.eval_id, str(data.summary.id), data.summary.epoch)

    async def on_sample_event(self, data: SampleEvent) -> None:
        if _active is not None:
            _active.sample_event(data.sample_id, data.event)

    async def on_sample_end(self, data: SampleEnd) -> None:
        if _active is not None:
            _active.sample_finished(data.sample_id, data.eval_id, data.sample)

    async def on_model_retry(self, data: ModelRetry) -> None:
        if _active is not None:
            _active.model_retry(data.sample_id, data)


def _limited(samples: int, limit: int | tuple[int, int] | None) -> int:
    """Samples a task runs under Inspect's `limit` (a count, or a (start, end) range)."""
    if limit is None:
        return samples
    if isinstance(limit, int):
        return min(samples, limit)
    return max(0, min(samples, limit[1]) - limit[0])


@contextmanager
def run_progress(progress: RunProgress) -> Iterator[RunProgress]:
    """Make `progress` receive Inspect's hooks for the duration of the block, and watch for samples
    that go quiet."""
    global _active, _registered
    if not _registered:
        hooks(name="forge_eval_progress", description="forge-eval's progress lines without a terminal")(
            _ProgressHooks
        )
        _registered = True
    stop = threading.Event()

    def watch() -> None:
        while not stop.wait(_WATCH_INTERVAL):
            progress.check_quiet()

    watcher = threading.Thread(target=watch, name="forge-progress-watch", daemon=True)
    _active = progress
    watcher.start()
    try:
        yield progress
    finally:
        stop.set()
        watcher.join()
        _active = None


def finished_samples(log_dir: Path, seeds: tuple[int, ...]) -> int:
    """Samples that earlier invocations of a run finished without error (a resumed run skips them):
    counted in each seed's newest log."""
    newest: dict[int, tuple[str, Any]] = {}
    for info in list_eval_logs(str(log_dir)) if log_dir.is_dir() else []:
        try:
            header = read_eval_log(info, header_only=True)
        except Exception:  # a log cut off by a kill holds nothing to skip
            continue
        seed = header.eval.task_args.get("seed")
        if seed in seeds and (seed not in newest or header.eval.created > newest[seed][0]):
            newest[seed] = (header.eval.created, info)
    done = 0
    for _, info in newest.values():
        try:
            done += sum(1 for s in read_eval_log_sample_summaries(info) if s.completed and s.error is None)
        except Exception:
            continue
    return done
