"""A worker that outlives its node's agent ends itself and everything it started.

Ray lets a task run on after its node's raylet is killed (the task's return goes straight to the
driver), and the driver retries the shard elsewhere: two copies would then run, the lost node's with its
sandboxes, browsers and desktops. `follow_parent()` ends the worker's process tree when its parent (the
raylet, on Linux) is gone.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

_started: set[int] = set()


def follow_parent(interval: float = 0.5) -> None:
    """From now on, when this process's parent dies, kill its descendants and exit (once per process)."""
    if os.getpid() in _started:
        return
    _started.add(os.getpid())
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(interval)
        for pid in descendants(os.getpid()):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                continue
        os._exit(1)

    threading.Thread(target=watch, name="forge-eval-lifeline", daemon=True).start()


def descendants(pid: int) -> list[int]:
    """Every process below `pid` (read from /proc)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        parents[int(entry.name)] = int(stat.rpartition(")")[2].split()[1])
    found, frontier = [], {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier}
        found += sorted(frontier)
    return found
