"""CPU / memory / pids limits for one sandbox: a cgroup (v2 or v1) where the kernel lets us, else rlimits.

bubblewrap has no resource limits of its own, and no library puts a process tree into a cgroup without a
systemd or container runtime, so this module writes the few cgroupfs files itself. Each sandbox gets a
child of *our own* cgroup in every hierarchy (nesting under the caller keeps the caller's own limits in
force), the first process joins it before it execs bubblewrap (so every descendant inherits it), and
`kill_all()` / `remove()` empty and delete it. `applied` says which mechanism enforced each limit, so a
report can state it ("cgroup-v1", "cgroup-v2", "rlimit" or "none").
"""

import contextlib
import os
import signal
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

Mechanism = Literal["cgroup-v2", "cgroup-v1", "rlimit", "none"]
Enforce = Literal["auto", "cgroup", "rlimit"]
_V1_CONTROLLERS = ("memory", "pids", "cpu")
_CPU_PERIOD_US = 100_000


def _mounts() -> list[tuple[str, str, set[str]]]:
    """(mount point, fs type, options) of the cgroup filesystems."""
    found = []
    with open("/proc/self/mounts") as f:
        for line in f:
            _, point, fstype, options, *_ = line.split()
            if fstype in ("cgroup", "cgroup2"):
                found.append((point, fstype, set(options.split(","))))
    return found


def _own_paths() -> dict[str, str]:
    """Our cgroup path per v1 controller, and under key "" the v2 path."""
    paths = {}
    with open("/proc/self/cgroup") as f:
        for line in f:
            _, controllers, path = line.rstrip("\n").split(":", 2)
            for c in controllers.split(",") if controllers else [""]:
                paths[c] = path
    return paths


def _write(path: Path, value: str) -> None:
    path.write_text(value)


@dataclass
class CgroupSet:
    """The cgroup directories of one sandbox and what enforced each limit."""

    dirs: list[Path] = field(default_factory=list)
    version: Literal[1, 2] | None = None
    applied: dict[str, Mechanism] = field(default_factory=dict)

    @property
    def procs_files(self) -> list[Path]:
        return [d / "cgroup.procs" for d in self.dirs]

    def pids(self) -> set[int]:
        found: set[int] = set()
        for procs in self.procs_files:
            try:
                found.update(int(p) for p in procs.read_text().split())
            except OSError:
                continue
        return found

    def oom_killed(self) -> bool:
        """Whether the kernel's OOM killer fired inside this sandbox's memory cgroup."""
        for d in self.dirs:
            for name in ("memory.events", "memory.oom_control"):
                try:
                    text = (d / name).read_text()
                except OSError:
                    continue
                for line in text.splitlines():
                    key, _, value = line.partition(" ")
                    if key == "oom_kill" and int(value) > 0:
                        return True
        return False

    def kill_all(self, timeout_s: float = 5.0) -> set[int]:
        """SIGKILL every process in the cgroups until they are empty; returns the pids still there."""
        deadline = time.monotonic() + timeout_s
        while True:
            left = self.pids()
            if not left or time.monotonic() > deadline:
                return left
            for pid in left:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.01)

    def remove(self) -> None:
        for d in self.dirs:
            with contextlib.suppress(OSError):
                d.rmdir()
        self.dirs = []


def _v2(name: str, cpus: float, memory_mb: int, pids: int) -> CgroupSet | None:
    mount = next((m for m in _mounts() if m[1] == "cgroup2"), None)
    if mount is None:
        return None
    parent = Path(mount[0]) / _own_paths().get("", "/").lstrip("/")
    try:
        available = set((parent / "cgroup.controllers").read_text().split())
    except OSError:
        return None
    if not {"memory", "pids", "cpu"} <= available:
        return None
    child = parent / name
    try:
        enabled = set((parent / "cgroup.subtree_control").read_text().split())
        missing = {"memory", "pids", "cpu"} - enabled
        if missing:
            _write(parent / "cgroup.subtree_control", " ".join(f"+{c}" for c in sorted(missing)))
        child.mkdir()
    except OSError:
        return None
    group = CgroupSet([child], 2)
    try:
        _write(child / "memory.max", str(memory_mb * 1024 * 1024))
        if (child / "memory.swap.max").exists():
            _write(child / "memory.swap.max", "0")
        _write(child / "pids.max", str(pids))
        _write(child / "cpu.max", f"{int(cpus * _CPU_PERIOD_US)} {_CPU_PERIOD_US}")
    except OSError:
        group.remove()
        return None
    group.applied = {"cpu": "cgroup-v2", "memory": "cgroup-v2", "pids": "cgroup-v2"}
    return group


def _v1(name: str, cpus: float, memory_mb: int, pids: int) -> CgroupSet | None:
    own = _own_paths()
    points = {}
    for point, fstype, options in _mounts():
        if fstype == "cgroup":
            for c in _V1_CONTROLLERS:
                if c in options:
                    points[c] = Path(point) / own.get(c, "/").lstrip("/")
    if set(points) != set(_V1_CONTROLLERS):
        return None
    group = CgroupSet(version=1)
    try:
        for c in _V1_CONTROLLERS:
            d = points[c] / name
            if d not in group.dirs:  # cpu may share a hierarchy with cpuacct (or others)
                d.mkdir()
                group.dirs.append(d)
        memory = points["memory"] / name
        limit = str(memory_mb * 1024 * 1024)
        _write(memory / "memory.limit_in_bytes", limit)
        if (memory / "memory.memsw.limit_in_bytes").exists():  # no escaping the limit into swap
            _write(memory / "memory.memsw.limit_in_bytes", limit)
        _write(points["pids"] / name / "pids.max", str(pids))
        cpu = points["cpu"] / name
        _write(cpu / "cpu.cfs_period_us", str(_CPU_PERIOD_US))
        _write(cpu / "cpu.cfs_quota_us", str(int(cpus * _CPU_PERIOD_US)))
    except OSError:
        group.remove()
        return None
    group.applied = {"cpu": "cgroup-v1", "memory": "cgroup-v1", "pids": "cgroup-v1"}
    return group


def create(cpus: float, memory_mb: int, pids: int, enforce: Enforce) -> CgroupSet:
    """A fresh cgroup set with the limits written, or an empty one (limits left to rlimits) when the
    kernel does not let us create one here (or `enforce == "rlimit"`)."""
    if enforce != "rlimit":
        name = f"forge-sbx-{uuid.uuid4().hex[:12]}"
        for make in (_v2, _v1):
            group = make(name, cpus, memory_mb, pids)
            if group is not None:
                return group
    # Without a cgroup only memory can be capped per process tree: RLIMIT_DATA counts private writable
    # memory (not V8's large PROT_NONE reservations, which RLIMIT_AS would). Neither a CPU share nor a
    # process count can be enforced per sandbox with rlimits (RLIMIT_NPROC counts the whole host user).
    return CgroupSet(applied={"cpu": "none", "memory": "rlimit", "pids": "none"})
