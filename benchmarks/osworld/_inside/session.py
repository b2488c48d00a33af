"""The desktop session: display, session bus, AT-SPI, window manager, the in-desktop server.

The first program of a desktop, run by Debian's python3 as the desktop user (inside the desktop's
sandbox, or as a container's command):

    python3 session.py --screen 1920x1080 -- SERVER_ARGV...

The session ends when the server exits or on SIGTERM; the sandbox's PID namespace then takes every
process of the desktop with it. It makes itself not dumpable first: the agent's code runs as the same
uid, and must not be able to ptrace the session into outliving its server (and so keep a desktop whose
server it replaced). The host reaches the server from outside (`PrivatePort`), not through this process.
The environment (DISPLAY, XDG_RUNTIME_DIR, DBUS_SESSION_BUS_ADDRESS, ...) comes from the caller.
"""

from __future__ import annotations

import argparse
import asyncio
import ctypes
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable

AT_SPI_LAUNCHER = "/usr/libexec/at-spi-bus-launcher"
OPENBOX_RC = "/etc/xdg/openbox/rc.xml"
#: GNOME's shortcut for a new terminal, which OSWorld's steps press (Ctrl+Alt+T) and openbox lacks.
TERMINAL_KEY = (
    '<keybind key="C-A-t"><action name="Execute"><command>gnome-terminal</command></action></keybind>'
)
PR_SET_DUMPABLE = 4


def _log(message: str) -> None:
    print(f"desktop session: {message}", file=sys.stderr, flush=True)


def _background(argv: list[str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )


def _wait_for(ready: Callable[[], bool], seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not ready():
        if time.monotonic() > deadline:
            raise SystemExit(f"desktop session: {what} did not come up within {seconds:.0f} s")
        time.sleep(0.05)


def xvfb_argv(display: str, width: int, height: int) -> list[str]:
    """The X server's command line. `-noreset`: by default Xvfb resets when its last client leaves, and
    refuses a client that connects meanwhile; after the readiness check (`xdpyinfo`) left, openbox was
    refused now and then, and the desktop ran without a window manager (windows undecorated, never
    maximized: Chromium without its caption buttons, LibreOffice's window unmaximized)."""
    return ["Xvfb", display, "-screen", "0", f"{width}x{height}x24", "-nolisten", "tcp", "-noreset"]


def start_desktop(width: int, height: int) -> None:
    """Xvfb, the session bus (which starts dconf, gnome-terminal-server and nautilus on demand, as in a
    GNOME session), the AT-SPI bus (on before any app starts, or apps expose no tree), openbox."""
    display = os.environ["DISPLAY"]
    runtime = os.environ["XDG_RUNTIME_DIR"]
    os.makedirs(runtime, mode=0o700, exist_ok=True)
    os.makedirs("/tmp/.X11-unix", exist_ok=True)
    os.chmod("/tmp/.X11-unix", 0o1777)
    xvfb = subprocess.Popen(
        xvfb_argv(display, width, height),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
    )

    def display_ready() -> bool:
        if xvfb.poll() is not None:
            raise SystemExit(f"desktop session: Xvfb exited at start (code {xvfb.returncode})")
        return subprocess.run(["xdpyinfo"], capture_output=True).returncode == 0

    _wait_for(display_ready, 15, f"Xvfb on {display}")
    bus = os.environ["DBUS_SESSION_BUS_ADDRESS"]
    _background(["dbus-daemon", "--session", "--nofork", "--nopidfile", f"--address={bus}"])
    _wait_for(lambda: os.path.exists(bus.removeprefix("unix:path=")), 10, "the session bus")
    if os.path.exists(AT_SPI_LAUNCHER):
        _background([AT_SPI_LAUNCHER, "--launch-immediately"])
        enable = [
            "dbus-send",
            "--session",
            "--type=method_call",
            "--dest=org.a11y.Bus",
            "/org/a11y/bus",
            "org.freedesktop.DBus.Properties.Set",
            "string:org.a11y.Status",
            "string:IsEnabled",
            "variant:boolean:true",
        ]
        subprocess.run(enable, capture_output=True, timeout=10)
    openbox = _background(["openbox", *_openbox_config(runtime)])

    def managed() -> bool:
        if openbox.poll() is not None:
            raise SystemExit(f"desktop session: openbox exited at start (code {openbox.returncode})")
        return subprocess.run(["wmctrl", "-m"], capture_output=True).returncode == 0

    _wait_for(managed, 15, "openbox managing the display")


def _openbox_config(runtime: str) -> list[str]:
    """openbox's own config plus GNOME's terminal shortcut, when both programs are there."""
    if not os.path.exists(OPENBOX_RC) or shutil.which("gnome-terminal") is None:
        return []
    with open(OPENBOX_RC, encoding="utf-8") as source:
        config = source.read().replace("<keyboard>", "<keyboard>" + TERMINAL_KEY, 1)
    path = os.path.join(runtime, "openbox-rc.xml")
    with open(path, "w", encoding="utf-8") as out:
        out.write(config)
    return ["--config-file", path]


def not_dumpable() -> None:
    """No process of this uid may ptrace this one, read its memory or take its descriptors from now on."""
    if ctypes.CDLL(None, use_errno=True).prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
        raise SystemExit(f"desktop session: prctl(PR_SET_DUMPABLE) failed: {os.strerror(ctypes.get_errno())}")


async def serve(server_argv: list[str]) -> int:
    """Run the server until it exits or SIGTERM; its exit status."""
    server = await asyncio.create_subprocess_exec(*server_argv, stdin=subprocess.DEVNULL)
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGTERM, server.terminate)
    return await server.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description="start an OSWorld desktop session and its server")
    parser.add_argument("--screen", default="1920x1080", help="WIDTHxHEIGHT")
    parser.add_argument("server", nargs="+", help="the in-desktop server's argv (after --)")
    args = parser.parse_args()
    width, height = (int(n) for n in args.screen.split("x"))
    not_dumpable()
    start_desktop(width, height)
    _log(f"display {os.environ['DISPLAY']} up; serving with {' '.join(args.server)}")
    sys.exit(asyncio.run(serve(args.server)))


if __name__ == "__main__":
    main()
