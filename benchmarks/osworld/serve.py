"""Serve one desktop with its controller until stopped: the entry point of the container image.

`python -m forge_eval.benchmarks.osworld.serve --bind 0.0.0.0 --port 5000` starts the desktop (a
throw-away user, Xvfb, AT-SPI), brings the apps in $FORGE_OSWORLD_APPS to their first-run-done state and
answers OSWorld's controller endpoints until SIGTERM, then stops the desktop.
"""

from __future__ import annotations

import argparse
import os
import signal
import threading

from forge_eval.benchmarks.osworld._controller import Controller
from forge_eval.benchmarks.osworld._desktop import LocalDesktop
from forge_eval.benchmarks.osworld._home import provision
from forge_eval.benchmarks.osworld.install import desktop_site


def main() -> None:
    parser = argparse.ArgumentParser(description="serve an OSWorld desktop and its controller")
    parser.add_argument("--bind", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=5000)
    args = parser.parse_args()
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    with LocalDesktop(site_dir=desktop_site()) as desktop:
        provision(desktop, set(filter(None, os.environ.get("FORGE_OSWORLD_APPS", "").split(","))))
        controller = Controller(desktop, args.bind, args.port).start()
        try:
            stop.wait()
        finally:
            controller.stop()


if __name__ == "__main__":
    main()
