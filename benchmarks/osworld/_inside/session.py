"""The desktop session: display, session bus, AT-SPI, window manager, port forwards, the in-desktop server.

The first program of a desktop, run by Debian's python3 as the desktop user (inside the desktop's
sandbox, or as a container's command):

    python3 session.py --screen 1920x1080 [--forward FD:PORT ...] -- SERVER_ARGV...

Each `--forward FD:PORT` is a listening socket the host opened in its own network namespace and passed
in; every connection accepted on it is piped to 127.0.0.1:PORT here. So the host reaches the server (and
VLC's HTTP interface) while nothing in the desktop can reach the host's ports. The session ends when the
server exits or on SIGTERM; the sandbox's PID namespace then takes every process of the desktop with it.
The environment (DISPLAY, XDG_RUNTIME_DIR, DBUS_SESSION_BUS_ADDRESS, ...) comes from the caller.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable

AT_SPI_LAUNCHER = "/usr/libexec/at-spi-bus-launcher"
_CHUNK = 65536


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


def start_desktop(width: int, height: int) -> None:
    """Xvfb, the session bus, the AT-SPI bus (on before any app starts, or apps expose no tree), openbox."""
    display = os.environ["DISPLAY"]
    runtime = os.environ["XDG_RUNTIME_DIR"]
    os.makedirs(runtime, mode=0o700, exist_ok=True)
    os.makedirs("/tmp/.X11-unix", exist_ok=True)
    os.chmod("/tmp/.X11-unix", 0o1777)
    xvfb = subprocess.Popen(
        ["Xvfb", display, "-screen", "0", f"{width}x{height}x24", "-nolisten", "tcp"],
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
    _background(["openbox"])


async def _pump(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    with contextlib.suppress(ConnectionError, OSError):
        while data := await reader.read(_CHUNK):
            writer.write(data)
            await writer.drain()
        if writer.can_write_eof():
            writer.write_eof()


async def _forward(listener: socket.socket, port: int) -> asyncio.Server:
    """Pipe every connection accepted on `listener` to 127.0.0.1:`port` of this network namespace."""

    async def accept(client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        try:
            server_r, server_w = await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            client_w.close()
            return
        await asyncio.gather(_pump(client_r, server_w), _pump(server_r, client_w))
        for writer in (client_w, server_w):
            writer.close()

    return await asyncio.start_server(accept, sock=listener)


async def serve(forwards: list[tuple[int, int]], server_argv: list[str]) -> int:
    """Run the server with the forwards until it exits or SIGTERM; its exit status."""
    listeners = [await _forward(socket.socket(fileno=fd), port) for fd, port in forwards]
    server = await asyncio.create_subprocess_exec(*server_argv, stdin=subprocess.DEVNULL)
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGTERM, server.terminate)
    code = await server.wait()
    for listener in listeners:
        listener.close()
    return code


def main() -> None:
    parser = argparse.ArgumentParser(description="start an OSWorld desktop session and its server")
    parser.add_argument("--screen", default="1920x1080", help="WIDTHxHEIGHT")
    parser.add_argument("--forward", action="append", default=[], metavar="FD:PORT")
    parser.add_argument("server", nargs="+", help="the in-desktop server's argv (after --)")
    args = parser.parse_args()
    width, height = (int(n) for n in args.screen.split("x"))
    forwards = [(int(fd), int(port)) for fd, port in (f.split(":") for f in args.forward)]
    start_desktop(width, height)
    _log(f"display {os.environ['DISPLAY']} up; serving with {' '.join(args.server)}")
    sys.exit(asyncio.run(serve(forwards, args.server)))


if __name__ == "__main__":
    main()
