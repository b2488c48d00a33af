"""Status lines for long work (a run's samples, model verification, npm installs, training runs).

One timestamped line on stderr each, so that a log without a terminal shows what is happening and
results printed on stdout stay clean to pipe.
"""

import sys
from datetime import datetime
from typing import IO


def duration(seconds: float) -> str:
    """`42 s`, `3 min 10 s`, `1 h 05 min`: short enough for a log line."""
    s = round(seconds)
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60:02d} s"
    return f"{s // 3600} h {s % 3600 // 60:02d} min"


def status(line: str, stream: IO[str] | None = None) -> None:
    """Print `[HH:MM:SS] line` to `stream` (default: stderr) at once."""
    print(f"[{datetime.now():%H:%M:%S}] {line}", file=stream or sys.stderr, flush=True)
