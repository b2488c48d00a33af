"""Chromium standing in for Google Chrome on the local desktop: its launcher name, profile and debugging port.

OSWorld's Ubuntu image has Google Chrome. Its tasks launch `google-chrome --remote-debugging-port=1337`
(and `socat tcp-listen:9222,fork tcp:localhost:1337`), its host-side setup steps and getters connect
Playwright over CDP to the VM's port 9222 (`chrome_open_tabs`, `get_open_tabs_info`, ...), and its file
getters read the profile under `~/.config/google-chrome` (Preferences, Bookmarks, History, Cookies, Local
State). Google Chrome is not free software and is not packaged for Debian; Debian's Chromium is the same
browser, so the desktop gets:

- `google-chrome` on its PATH: a launcher in the read-only tools folder that runs Debian's Chromium under
  the name `chrome` (the tasks' `pkill chrome` ends it, as it ends Google Chrome), with Google Chrome's
  profile folder and first run done (as in OSWorld's image), its environment built from nothing;
- the debugging port: the host reaches 1337 itself, by a `PrivatePort` like the in-desktop server's,
  not through the socat the task starts inside the desktop (a process the agent's uid could replace).
  Playwright's driver, a child process of the run, is the only other process allowed to use it, and a
  connection is kept only while the port is held by Chromium alone, running no code from outside the
  system's read-only folders: the agent may restart the browser (tasks do), not put another program or
  a preloaded library behind the port.

Online, Chromium reaches the live web the way the web benchmarks' browser does: through an egress gate
(`forge_eval.benchmarks.web.EgressGate`, public addresses only, each checked after DNS) that this run
serves on the host, which the desktop reaches by a forward on its own loopback (`PROXY_PORT`). The
launcher points Chromium at it; nothing else in the desktop has a network.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shlex
import subprocess
import threading
from collections.abc import Callable, Coroutine, Iterable, Mapping
from functools import cache
from pathlib import Path
from typing import Any, TypeVar

from forge_eval.benchmarks.web import BrowserConfig, EgressGate, NetworkPolicy
from forge_eval.sandbox import socket_holders

logger = logging.getLogger(__name__)
T = TypeVar("T")

#: Debian's Chromium binary (not /usr/bin/chromium, a shell wrapper that adds Debian's flags).
CHROMIUM = Path("/usr/lib/chromium/chromium")
#: The debugging port the tasks start Chrome with; the host's channel leads straight to it.
DEBUG_PORT = 1337
#: The port OSWorld's host-side code connects to on the VM (`DesktopEnv.chromium_port`).
UPSTREAM_PORT = 9222
#: Google Chrome's profile folder on Linux, where OSWorld's getters read the browser's state.
PROFILE = ".config/google-chrome"
LAUNCHER = "google-chrome"
#: The desktop's own loopback port that leads to the run's egress gate (online only).
PROXY_PORT = 1080
#: Seconds the gate waits for a site to accept a connection.
CONNECT_TIMEOUT_S = 30.0
#: The tools folder's folder holding Chromium as `chrome`.
CHROME_DIR = "chrome"
#: The launcher's own flags: Google Chrome's profile, first run done (OSWorld's image has run Chrome
#: before), no keyring prompt (the desktop has no GNOME keyring: cookies and passwords stored unencrypted).
FLAGS = ("--no-first-run", "--no-default-browser-check", "--password-store=basic")
#: What the browser's environment keeps from the desktop's (nothing that loads code: no PYTHONPATH, no
#: LD_*; GTK_MODULES is the desktop's own accessibility bridge, ACCESSIBILITY_ENABLED turns Chromium's on).
KEPT_ENV = (
    "DISPLAY",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "PATH",
    "LANG",
    "XDG_RUNTIME_DIR",
    "DBUS_SESSION_BUS_ADDRESS",
    "GTK_MODULES",
    "NO_AT_BRIDGE",
    "ACCESSIBILITY_ENABLED",
)


@cache
def chromium_version() -> str | None:
    """'Chromium 156.0.8078.114' (what the protocol record names), or None when it is not installed."""
    if not CHROMIUM.is_file():
        return None
    try:
        out = subprocess.run([str(CHROMIUM), "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    words = out.stdout.split()
    return " ".join(words[:2]) if len(words) >= 2 else None


def browser_env(desktop_env: Mapping[str, str]) -> dict[str, str]:
    """The browser's whole environment: the kept variables of the desktop's."""
    return {k: desktop_env[k] for k in KEPT_ENV if k in desktop_env}


def write_launcher(bin_dir: Path, chrome_dir: Path, env: Mapping[str, str], egress: bool = False) -> None:
    """`bin_dir/google-chrome`, and Chromium as `chrome_dir/chrome`. The launcher adds the profile folder
    unless the caller names one, and with `egress` the desktop's way to the live web (`PROXY_PORT`).

    Chromium names its process after the file it runs from (`prctl(PR_SET_NAME)` with the basename of
    /proc/self/exe, a symbolic link resolved), so `chrome` is a hard link to Chromium's binary, beside
    links to the files Chromium loads from its own folder (paks, ICU data, V8 snapshots, locales).
    """
    chrome_dir.mkdir(exist_ok=True)
    for entry in CHROMIUM.parent.iterdir():
        if entry != CHROMIUM:
            (chrome_dir / entry.name).symlink_to(entry)
    try:
        os.link(CHROMIUM, chrome_dir / "chrome")
    except OSError as exc:  # another file system: the process is then named `chromium`
        logger.warning("Chromium runs as 'chromium': the tasks' `pkill chrome` will not end it (%s)", exc)
        (chrome_dir / "chrome").symlink_to(CHROMIUM)
    flags = [*FLAGS, *([f"--proxy-server=socks5://127.0.0.1:{PROXY_PORT}"] if egress else [])]
    assignments = " ".join(shlex.quote(f"{k}={v}") for k, v in env.items())
    profile = shlex.quote(f"--user-data-dir={env.get('HOME', '/home/user')}/{PROFILE}")
    script = f"""#!/bin/sh
# Chromium standing in for Google Chrome (forge-eval's OSWorld local desktop).
case " $* " in *" --user-data-dir="*) profile= ;; *) profile={profile} ;; esac
exec /usr/bin/env -i {assignments} {shlex.quote(str(chrome_dir / "chrome"))} $profile {" ".join(flags)} "$@"
"""
    launcher = bin_dir / LAUNCHER
    launcher.write_text(script)
    launcher.chmod(0o755)


def _is_chromium(pid: int, root: Path = Path("/")) -> bool:
    """Whether `pid` runs Chromium's binary (by inode: the launcher's `chrome` is a hard link to it), the
    one of the desktop's file system `root` (a container's, seen from the host)."""
    try:
        running, binary = os.stat(f"/proc/{pid}/exe"), (root / CHROMIUM.relative_to("/")).stat()
    except OSError:
        return False
    return (running.st_dev, running.st_ino) == (binary.st_dev, binary.st_ino)


def _code_from(pid: int) -> set[str] | None:
    """The files `pid` runs code from (its executable mappings; None when they cannot be read)."""
    try:
        maps = Path(f"/proc/{pid}/maps").read_text()
    except OSError:
        return None
    fields = (line.split(maxsplit=5) for line in maps.splitlines())
    return {f[5].strip() for f in fields if len(f) > 5 and "x" in f[1] and not f[5].startswith("[")}


def trusted_browser(
    processes: Callable[[], Iterable[int]], chrome_dir: Path, root: Path = Path("/")
) -> Callable[[str | None], bool]:
    """A listener check for the debugging port: held, and only held, by Chromium processes that run code
    from the system's read-only folders and `chrome_dir` alone. Their environment cannot be checked
    (Chromium writes its process title over it), and a Chromium started with a library preloaded from
    the home or /tmp (LD_PRELOAD, GTK_MODULES) would be one the agent answers for."""
    allowed = ("/usr/", "/lib/", "/lib64/", f"{chrome_dir}/")

    def trusted(inode: str | None) -> bool:
        holders = socket_holders(inode, processes()) if inode is not None else []
        for pid in holders:
            code = _code_from(pid)
            if not _is_chromium(pid, root) or code is None or not all(f.startswith(allowed) for f in code):
                return False
        return bool(holders)

    return trusted


def run_processes() -> list[int]:
    """This process and its children of the same uid: Playwright's driver, which opens the CDP
    connections of OSWorld's setup steps and getters, is one (a new one per `sync_playwright()`)."""
    me, uid = os.getpid(), os.geteuid()
    pids = [me]
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        with contextlib.suppress(OSError, IndexError, ValueError):
            stat = Path(f"/proc/{entry}/stat").read_text()
            if int(stat.rsplit(")", 1)[1].split()[1]) == me and os.stat(f"/proc/{entry}").st_uid == uid:
                pids.append(int(entry))
    return pids


class Egress:
    """The run's egress gate for one desktop (the web benchmarks' policy: public addresses only), served
    from a thread of its own; `target` is where the desktop's forward connects. The sandbox's bridge
    to it runs on the same event loop (`run`), which lives as long as the desktop."""

    def __init__(self) -> None:
        self.gate = EgressGate(NetworkPolicy(BrowserConfig(offline=False)), CONNECT_TIMEOUT_S)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="osworld-egress", daemon=True)
        self._thread.start()
        url = asyncio.run_coroutine_threadsafe(self.gate.start(), self._loop).result(30)
        self.target = url.removeprefix("socks5://")

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        """`coroutine`'s result, run on the gate's event loop."""
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result()

    def close(self) -> None:
        if self._thread.is_alive():
            asyncio.run_coroutine_threadsafe(self.gate.close(), self._loop).result(30)
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(10)
        self._loop.close()
