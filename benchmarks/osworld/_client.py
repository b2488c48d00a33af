"""The host's side of a desktop: its in-desktop server, reached over HTTP like OSWorld's VM.

Whatever provider runs the desktop (a sandbox here, a container, OSWorld's VM), the host acts on it only
through the endpoints of OSWorld's in-VM server (`/setup/execute`, `/setup/upload`, `/file`, ...), so
every command runs as the desktop user, inside the desktop, exactly as OSWorld's own clients run them.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import httpx

from forge_eval._errors import ForgeError

#: OSWorld's desktop user's home; task configs and checkers name these paths literally.
HOME = "/home/user"


class DesktopClient:
    """Calls one desktop's in-desktop server at `http://host:port`."""

    def __init__(self, host: str, port: int) -> None:
        self.host = host
        self.port = port
        self.url = f"http://{host}:{port}"
        self._http = httpx.Client(base_url=self.url, timeout=150)

    def close(self) -> None:
        self._http.close()

    def wait_ready(
        self, seconds: float, gone: Callable[[], str | None] = lambda: None, hint: str | None = None
    ) -> None:
        """Wait until the server answers; `gone()` says why the desktop has ended, if it has."""
        deadline = time.monotonic() + seconds
        while True:
            if (why := gone()) is not None:
                raise ForgeError(f"the OSWorld desktop did not start: {why}", hint=hint)
            try:
                self._http.get("/platform", timeout=2).raise_for_status()
                return
            except httpx.HTTPError:
                if time.monotonic() > deadline:
                    raise ForgeError(
                        f"the OSWorld desktop's server did not answer at {self.url} within {seconds:.0f} s"
                    ) from None
                time.sleep(0.1)

    def execute(self, command: Sequence[str] | str, shell: bool = False) -> dict[str, Any]:
        """Run `command` as the desktop user and wait for it: status, output, error, returncode."""
        payload = {"command": command if isinstance(command, str) else list(command), "shell": shell}
        response = self._http.post("/setup/execute", json=payload)
        response.raise_for_status()
        return response.json()

    def launch(self, command: Sequence[str] | str, shell: bool = False) -> None:
        """Start `command` in the background as the desktop user."""
        payload = {"command": command if isinstance(command, str) else list(command), "shell": shell}
        self._http.post("/setup/launch", json=payload).raise_for_status()

    def upload(self, path: str, data: bytes) -> None:
        """Write `data` at `path` in the desktop (folders created), owned by the desktop user."""
        self._http.post(
            "/setup/upload", data={"file_path": path}, files={"file_data": ("file", data)}
        ).raise_for_status()

    def read(self, path: str) -> bytes | None:
        """The content of the desktop's file at `path`, or None when there is none."""
        response = self._http.post("/file", data={"file_path": path})
        if response.status_code == 404:
            return None
        response.raise_for_status()
        return response.content

    def window_titles(self) -> list[str]:
        """Titles of the desktop's top-level windows."""
        listing = self.execute(["wmctrl", "-l"])["output"]
        return [line.split(None, 3)[3] for line in listing.splitlines() if len(line.split(None, 3)) == 4]

    def wait_for_window(self, title_part: str, timeout: float) -> bool:
        """Wait until a window whose title contains `title_part` is shown; False on timeout."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if any(title_part in title for title in self.window_titles()):
                return True
            time.sleep(0.5)
        return False
