"""How many CPU threads llama.cpp gets: the cores that are idle when the server starts.

llama.cpp's threads meet at a barrier after every operation, so a thread that another process
descheduled stalls them all. bench/model_speed.py measures both sides on a 2-core machine: idle,
2 threads beat 1; with one other busy process, 2 threads fall far below 1 (figures in README's
"The embedded model"). So the server takes as many threads as there are idle cores when it starts,
at least one: all of them when the run is the machine's only job (`make run` on an idle machine),
one when something else already keeps a core busy. Idleness is the most idle of a few short windows,
so that a blip (a process ending, the disk flushing what set-up wrote) does not cost the whole run a
core: a fresh-clone `make run` on the otherwise idle machine took 1 thread after measuring 1.1 idle
cores over one second. `FORGE_EVAL_MODEL_THREADS=N` fixes the count.
"""

from __future__ import annotations

import os
import time

from forge_eval._errors import ForgeError

THREADS_VARIABLE = "FORGE_EVAL_MODEL_THREADS"

_IDLE_WINDOW_S = 0.5
_IDLE_WINDOWS = 3
# A core counts as idle when at least this much of it was idle over the window.
_IDLE_SHARE = 0.75


def _cpu_times() -> tuple[int, int] | None:
    """(idle, total) jiffies of all CPUs since boot, None where /proc/stat cannot be read."""
    try:
        with open("/proc/stat") as f:
            fields = [int(v) for v in f.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
    return idle, sum(fields[:8])


def idle_cores(window: float = _IDLE_WINDOW_S, windows: int = _IDLE_WINDOWS) -> float | None:
    """Cores' worth of idle CPU time in the most idle of the next `windows` spans of `window` seconds
    (None: not measurable here). Work that keeps a core busy shows in every span, a blip in one."""
    shares = []
    before = _cpu_times()
    for _ in range(windows):
        time.sleep(window)
        after = _cpu_times()
        if before is None or after is None or after[1] <= before[1]:
            return None
        shares.append((after[0] - before[0]) / (after[1] - before[1]))
        before = after
    return max(shares) * (os.cpu_count() or 1)


def choose_threads() -> tuple[int, str]:
    """The idle cores this process may use (see the module docstring), at least 1, and why; half the
    usable cores where idleness cannot be measured."""
    fixed = os.environ.get(THREADS_VARIABLE, "").strip()
    if fixed:
        if not fixed.isdigit() or int(fixed) < 1:
            raise ForgeError(f"{THREADS_VARIABLE}={fixed} is not a thread count", hint="set it to 1, 2, ...")
        return int(fixed), f"{THREADS_VARIABLE}={fixed}"
    usable = len(os.sched_getaffinity(0))
    idle = idle_cores()
    if idle is None:
        return max(1, usable // 2), f"half of {usable} cores: idle time not measurable here"
    threads = max(1, min(usable, int(idle + (1 - _IDLE_SHARE))))
    return threads, f"{idle:.1f} of {usable} cores idle"


def default_threads() -> int:
    """`choose_threads`' count."""
    return choose_threads()[0]
