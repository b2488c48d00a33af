"""When the desktop is ready for the agent and settled for the checker: upstream's sleeps, or their causes.

Upstream's runner (`lib_run_single.py`) sleeps 60 s between the task's setup and the first observation,
and 20 s between the agent's last action and `DesktopEnv.evaluate`: 80 s of every task. The sleeps stand
for two conditions, and the `ready` policy waits for those instead, never longer than upstream's sleep:

- ready: what the setup launched is up (each process it started has a window mapped, or has run past
  its start-up, `STARTUP_S`), the window list, the screen and the accessibility tree are still, and the
  desktop's processes are idle, all for `QUIET_S` in a row;
- settled: no file under the user's home changing, the screen still and the processes idle, for `QUIET_S`.

"Still" screens allow a few changed pixels (`STILL_PIXELS`): a blinking caret or a clock must not hold a
desktop back, nor may text of the tree that changes with time alone (`DYNAMIC_TREE_TEXT`, masked). Each
phase is read through the desktop's own server (a probe run as the desktop user, the screenshot and the
tree upstream's controller fetches), so it works for every provider. What was waited for and how long is
recorded per sample (`WaitRecord`).
"""

from __future__ import annotations

import io
import json
import re
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any
from xml.etree import ElementTree

import anyio
import numpy as np
from PIL import Image

from forge_eval._registry import Registry
from forge_eval.benchmarks.osworld._client import DesktopClient

#: Seconds every condition must hold in a row.
QUIET_S = 2.0
#: Seconds a launched process without a window may still be starting (a daemon has none for ever).
STARTUP_S = 10.0
#: Seconds from the start of one look to the start of the next, at least. A look on a real desktop takes
#: longer (about 0.75 s on 2 cores: the CPU sample, the screenshot, the tree), so its looks follow each
#: other without a pause: a pause would only lengthen the quiet window's last step.
POLL_S = 0.5
#: Changed pixels two screenshots may differ by and still be the same screen (a caret, a clock).
STILL_PIXELS = 2000
#: CPU time (seconds per second of wall time) under which the desktop's processes are idle, measured over
#: `CPU_SAMPLE_S` in which nothing is asked of them.
IDLE_CPU = 0.15
CPU_SAMPLE_S = 0.4
#: Text of an accessibility tree that changes with time alone, as a clock on the screen does, masked where
#: trees are compared: Chromium names each tab with its memory use ("New Tab - Memory usage - 33.4 MB"),
#: which drifts from one look to the next.
DYNAMIC_TREE_TEXT = (re.compile(r"(Memory usage - )[0-9.,]+ [KMGT]?B"),)

#: Files under the home that looking at the desktop writes, left out of the settle: each screenshot the
#: server takes (pyautogui through gnome-screenshot) registers itself in GTK's recent files.
WRITTEN_BY_LOOKING = (".local/share/recently-used.xbel",)
#: Run as the desktop user by the server: the windows with their pids, the processes the server started
#: (the setup's launches) with their age and whether they hold a window, the CPU time of every process
#: but this probe, and (for the settle) a digest of every file under the home.
_PROBE = r"""
import hashlib, json, os, subprocess, sys, time
tick = os.sysconf("SC_CLK_TCK")
me, server = os.getpid(), os.getppid()
def processes():
    uptime = float(open("/proc/uptime").read().split()[0])
    found = {}
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == me:
            continue
        try:
            fields = open(f"/proc/{name}/stat").read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z":
            cpu = (int(fields[11]) + int(fields[12])) / tick
            found[int(name)] = (int(fields[1]), cpu, uptime - int(fields[19]) / tick)
    return found
# the CPU rate over a moment when nothing is asked of the apps (a screenshot or tree costs them CPU)
first, started = processes(), time.monotonic()
time.sleep(SAMPLE)
procs, took = processes(), time.monotonic() - started
rate = sum(cpu - first[pid][1] for pid, (_, cpu, _) in procs.items() if pid in first and pid != server) / took
windows = subprocess.run(["wmctrl", "-lp"], capture_output=True, text=True).stdout.splitlines()
owners = {int(w.split()[2]) for w in windows if len(w.split()) > 2 and w.split()[2].isdigit()}
children = {}
for pid, (ppid, _, _) in procs.items():
    children.setdefault(ppid, []).append(pid)
def tree(pid):
    found = [pid]
    for child in children.get(pid, []):
        found += tree(child)
    return found
launched = [p for p in tree(server) if p != server]
pending = [p for p in launched if procs[p][2] < STARTUP and not owners.intersection(tree(p))]
digest = ""
if "--files" in sys.argv:
    listing = hashlib.sha256()
    home = os.path.expanduser("~")
    for folder, _dirs, files in os.walk(home):
        for file in sorted(files):
            path = os.path.join(folder, file)
            if os.path.relpath(path, home) in OBSERVERS:
                continue
            try:
                info = os.lstat(path)
            except OSError:
                continue
            listing.update(f"{path} {info.st_size} {info.st_mtime_ns}\n".encode())
    digest = listing.hexdigest()
print(json.dumps({
    "windows": sorted(" ".join(w.split()[:1] + w.split()[3:]) for w in windows),
    "pending": len(pending),
    "cpu": rate,
    "files": digest,
}))
""".replace("STARTUP", repr(STARTUP_S)).replace("SAMPLE", repr(CPU_SAMPLE_S)).replace(
    "OBSERVERS", repr(set(WRITTEN_BY_LOOKING))
)


@dataclass(frozen=True)
class WaitRecord:
    """What one phase waited for, and how long (kept in the sample's metadata)."""

    policy: str
    phase: str
    waited_s: float
    reason: str
    looks: int = 0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Look:
    """The desktop at one moment, as the conditions compare it."""

    at: float
    windows: tuple[str, ...]
    pending: int
    #: The desktop's processes' CPU time per second of wall time, just before the look.
    cpu: float
    files: str
    #: None when the server gave no screenshot (its screen grab fails now and then): not still.
    screen: np.ndarray | None
    tree: str | None


class WaitPolicy(ABC):
    """How long to wait before the first observation (`ready`) and before the checker (`settled`)."""

    name: str
    description: str

    @abstractmethod
    async def ready(self, desktop: Desktop, cap: float) -> WaitRecord: ...

    @abstractmethod
    async def settled(self, desktop: Desktop, cap: float) -> WaitRecord: ...


WAIT_POLICIES: Registry[WaitPolicy] = Registry("OSWorld waits setting")


class Desktop:
    """What the conditions read of a desktop: its server, and upstream's controller's screenshot and tree."""

    def __init__(
        self, client: DesktopClient, screenshot: Callable[[], bytes | None], tree: Callable[[], str | None]
    ) -> None:
        self.client = client
        self._screenshot = screenshot
        self._tree = tree

    def look(self, files: bool = False, tree: bool = True) -> Look:
        """The desktop now (blocking: a probe, a screenshot and the tree through the server)."""
        probe = ["python3", "-c", _PROBE, *(["--files"] if files else [])]
        found = json.loads(self.client.execute(probe)["output"])
        screen = grey_screen(self._screenshot())
        return Look(
            at=time.monotonic(),
            windows=tuple(found["windows"]),
            pending=int(found["pending"]),
            cpu=float(found["cpu"]),
            files=found["files"],
            screen=screen,
            tree=self._tree() if tree else None,
        )


def still(before: Look, after: Look) -> list[str]:
    """What changed from `before` to `after` (empty: the desktop held still)."""
    changed = []
    if after.pending:
        changed.append(f"{after.pending} launched process(es) without a window yet")
    if after.windows != before.windows:
        changed.append("the window list")
    if before.screen is None or after.screen is None:
        changed.append("the screen (no screenshot)")
    elif not after.screen.any():
        changed.append("the screen (blank: nothing drawn yet)")
    elif changed_pixels(before.screen, after.screen) > STILL_PIXELS:
        changed.append("the screen")
    if masked_tree(after.tree) != masked_tree(before.tree):
        changed.append("the accessibility tree")
    if after.files != before.files:
        changed.append("files under the home")
    if after.cpu > IDLE_CPU:
        changed.append(f"CPU busy ({after.cpu:.2f} s/s)")
    return changed


def masked_tree(tree: str | None) -> str | None:
    """`tree` with its dynamic text (`DYNAMIC_TREE_TEXT`) masked."""
    if not tree:
        return tree
    for pattern in DYNAMIC_TREE_TEXT:
        tree = pattern.sub(r"\1…", tree)
    return tree


def tree_text(tree: str | None) -> list[str]:
    """What an accessibility tree says, node by node (names and text, dynamic text masked), without the
    nodes' roles: a container's role may still change after a desktop looks ready (LibreOffice's slide
    pane, on a loaded machine, showed as a `panel` before it became a `scroll-pane`)."""
    tree = masked_tree(tree)
    if not tree:
        return []
    root = ElementTree.fromstring(tree)
    return [f"{node.get('name', '')}|{(node.text or '').strip()}" for node in root.iter()]


def grey_screen(png: bytes | None) -> np.ndarray | None:
    try:
        return np.asarray(Image.open(io.BytesIO(png)).convert("L")) if png else None
    except (OSError, ValueError):
        return None


def changed_pixels(a: np.ndarray, b: np.ndarray) -> int:
    """Pixels that differ visibly between two grey screens (all of them when the sizes differ)."""
    if a.shape != b.shape:
        return max(a.size, b.size)
    return int(np.count_nonzero(np.abs(a.astype(np.int16) - b.astype(np.int16)) > 8))


class UpstreamWaits(WaitPolicy):
    name = "upstream"
    description = "upstream's fixed sleeps (lib_run_single.py: 60 s after setup, 20 s before the checker)"

    async def ready(self, desktop: Desktop, cap: float) -> WaitRecord:
        await anyio.sleep(cap)
        return WaitRecord(self.name, "ready", cap, "upstream's fixed sleep")

    async def settled(self, desktop: Desktop, cap: float) -> WaitRecord:
        await anyio.sleep(cap)
        return WaitRecord(self.name, "settled", cap, "upstream's fixed sleep")


class ConditionWaits(WaitPolicy):
    name = "ready"
    description = (
        "until the desktop is ready (launched apps up; windows, screen, tree still; CPU idle) and settled "
        "(home files, screen still; CPU idle), each never longer than upstream's sleep"
    )

    async def ready(self, desktop: Desktop, cap: float) -> WaitRecord:
        return await anyio.to_thread.run_sync(lambda: self._until_still(desktop, cap, "ready", files=False))

    async def settled(self, desktop: Desktop, cap: float) -> WaitRecord:
        return await anyio.to_thread.run_sync(lambda: self._until_still(desktop, cap, "settled", files=True))

    def _until_still(self, desktop: Desktop, cap: float, phase: str, files: bool) -> WaitRecord:
        """Look until nothing changed for QUIET_S, or `cap` seconds have passed (blocking)."""
        start = looked = time.monotonic()
        previous = desktop.look(files=files, tree=not files)
        quiet_since: float | None = None
        looks, changed = 1, ["nothing looked at yet"]
        while time.monotonic() - start < cap:
            time.sleep(max(0.0, min(looked + POLL_S, start + cap) - time.monotonic()))
            looked = time.monotonic()
            current = desktop.look(files=files, tree=not files)
            looks += 1
            changed = still(previous, current)
            quiet_since = (quiet_since or previous.at) if not changed else None
            previous = current
            if quiet_since is not None and current.at - quiet_since >= QUIET_S:
                waited = round(time.monotonic() - start, 2)
                what = "launched apps up, windows, screen, tree" if not files else "home files, screen"
                reason = f"{what} still and CPU idle for {QUIET_S:g} s"
                return WaitRecord(self.name, phase, waited, reason, looks)
        waited = round(time.monotonic() - start, 2)
        reason = f"cap of {cap:g} s reached; still changing: {', '.join(changed)}"
        return WaitRecord(self.name, phase, waited, reason, looks)


for _policy in (UpstreamWaits(), ConditionWaits()):
    WAIT_POLICIES.register(_policy.name, _policy)
