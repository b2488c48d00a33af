"""The embedded server's thread count follows the cores that are idle when it starts."""

import multiprocessing
import os

import pytest

from forge_eval._errors import ForgeError
from forge_eval.models import _threads


def _spin() -> None:
    while True:
        pass


def test_cores_kept_busy_by_other_processes_are_not_counted_idle():
    cores = os.cpu_count() or 1
    spinners = [multiprocessing.Process(target=_spin, daemon=True) for _ in range(cores)]
    for proc in spinners:
        proc.start()
    try:
        idle = _threads.idle_cores(window=1.0)
    finally:
        for proc in spinners:
            proc.terminate()
            proc.join()
    assert idle is not None and idle < 0.5, idle
    assert _threads.idle_cores(window=0.2) is not None


def test_a_blip_in_one_window_does_not_count_as_busy(monkeypatch):
    # (idle, total) jiffies: the first window busy (10 of 100 idle), the next two idle (95 of 100)
    times = iter([(0, 0), (10, 100), (105, 200), (200, 300)])
    monkeypatch.setattr(_threads, "_cpu_times", lambda: next(times))
    monkeypatch.setattr(_threads.time, "sleep", lambda s: None)
    monkeypatch.setattr(_threads.os, "cpu_count", lambda: 2)
    assert _threads.idle_cores(window=0.5, windows=3) == pytest.approx(1.9)


@pytest.mark.parametrize(
    ("idle", "usable", "threads"),
    [(1.95, 2, 2), (1.8, 2, 2), (1.6, 2, 1), (1.0, 2, 1), (0.05, 2, 1), (7.9, 4, 4), (3.2, 8, 3)],
)
def test_the_thread_count_is_the_idle_cores_at_least_one(monkeypatch, idle, usable, threads):
    monkeypatch.setattr(_threads, "idle_cores", lambda window=1.0: idle)
    monkeypatch.setattr(_threads.os, "sched_getaffinity", lambda pid: set(range(usable)))
    count, why = _threads.choose_threads()
    assert count == threads and why == f"{idle:.1f} of {usable} cores idle"


def test_without_proc_stat_half_the_cores(monkeypatch):
    monkeypatch.setattr(_threads, "idle_cores", lambda window=1.0: None)
    monkeypatch.setattr(_threads.os, "sched_getaffinity", lambda pid: {0, 1, 2, 3})
    assert _threads.choose_threads() == (2, "half of 4 cores: idle time not measurable here")


def test_the_environment_can_fix_the_count(monkeypatch):
    monkeypatch.setattr(_threads, "idle_cores", lambda window=1.0: 2.0)
    monkeypatch.setenv(_threads.THREADS_VARIABLE, "1")
    assert _threads.choose_threads() == (1, "FORGE_EVAL_MODEL_THREADS=1")
    monkeypatch.setenv(_threads.THREADS_VARIABLE, "all")
    with pytest.raises(ForgeError, match="FORGE_EVAL_MODEL_THREADS=all is not a thread count"):
        _threads.choose_threads()
