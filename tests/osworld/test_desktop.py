"""The local desktop and its controller: OSWorld's endpoints work, and stop() leaves nothing behind."""

from __future__ import annotations

import io
import os
import pwd
import tomllib
from pathlib import Path

import httpx
import pytest
from PIL import Image

pytestmark = pytest.mark.slow


def test_controller_endpoints_and_clean_stop(desktop_ready: None) -> None:
    from forge_eval.benchmarks.osworld import Controller, LocalDesktop
    from forge_eval.benchmarks.osworld.install import desktop_site

    desktop = LocalDesktop(site_dir=desktop_site()).start()
    controller = Controller(desktop).start()
    user, uid, display, session = desktop.user, desktop.uid, desktop.display, desktop._tmp
    try:
        url = controller.url
        shot = Image.open(io.BytesIO(httpx.get(f"{url}/screenshot", timeout=30).content))
        assert shot.size == (1920, 1080)
        ran = httpx.post(f"{url}/execute", json={"command": ["id", "-un"], "shell": False}, timeout=30).json()
        assert ran["output"].strip() == user and ran["returncode"] == 0
        code = "import pyautogui; print(pyautogui.size())"
        ran = httpx.post(f"{url}/execute", json={"command": ["python", "-c", code]}, timeout=30).json()
        assert "1920" in ran["output"], ran
        httpx.post(
            f"{url}/setup/upload",
            files={"file_data": ("a.txt", b"hi")},
            data={"file_path": "/home/user/Desktop/a.txt"},
            timeout=30,
        ).raise_for_status()
        assert Path("/home/user/Desktop/a.txt").stat().st_uid == uid
        got = httpx.post(f"{url}/file", data={"file_path": "/home/user/Desktop/a.txt"}, timeout=30)
        assert got.content == b"hi"
        assert httpx.post(f"{url}/file", data={"file_path": "/home/user/none"}, timeout=30).status_code == 404
        tree = httpx.get(f"{url}/accessibility", timeout=60).json()["AT"]
        assert tree.startswith("<desktop-frame")
        # An app, and a process that left its parent behind (double fork): both must go with the desktop.
        httpx.post(f"{url}/setup/launch", json={"command": ["vlc", "--no-audio"]}, timeout=30)
        httpx.post(
            f"{url}/execute",
            json={"command": "setsid sleep 600 >/dev/null 2>&1 &", "shell": True},
            timeout=30,
        )
        assert desktop.wait_for_window("VLC", 30)
        assert len(desktop.processes()) >= 3
    finally:
        controller.stop()
        desktop.stop()
    assert not [p for p in os.listdir("/proc") if p.isdigit() and _uid_of(p) == uid]
    assert user not in [u.pw_name for u in pwd.getpwall()]
    assert not os.path.exists("/home/user")
    assert session is not None and not session.exists()
    number = display.lstrip(":")
    assert not os.path.exists(f"/tmp/.X{number}-lock") and not os.path.exists(f"/tmp/.X11-unix/X{number}")


def _uid_of(pid: str) -> int | None:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    if "\nState:\tZ" in status:
        return None
    return int(next(line for line in status.splitlines() if line.startswith("Uid:")).split()[1])


def test_install_pins_match_the_osworld_extra() -> None:
    from forge_eval.benchmarks.osworld.install import CHECKER_PACKAGES

    pyproject = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())
    assert sorted(pyproject["project"]["optional-dependencies"]["osworld"]) == sorted(CHECKER_PACKAGES)


def test_sandboxed_desktop_has_no_network(desktop_ready: None) -> None:
    import shutil

    from forge_eval.benchmarks.osworld import Controller, LocalDesktop

    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap not installed (scripts/setup.d/60-desktop.sh)")
    desktop = LocalDesktop(sandbox=True).start()
    controller = Controller(desktop).start()
    try:
        probe = f"import socket; socket.create_connection(('127.0.0.1', {controller.port}), timeout=5)"
        blocked = desktop.run(["python3", "-c", probe], timeout=30)
        assert blocked.returncode != 0 and b"Connection refused" in blocked.stderr
        shown = desktop.run(["xdpyinfo"], timeout=30)  # the display is still reachable
        assert shown.returncode == 0, shown.stderr
    finally:
        controller.stop()
        desktop.stop()
    assert not os.path.exists("/home/user")
