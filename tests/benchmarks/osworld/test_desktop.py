"""The local desktop runs the OSWorld tree's in-VM server: its endpoints work, and stop() leaves
nothing."""

from __future__ import annotations

import io
import os
import re
import shutil
import subprocess
import time
import tomllib
from pathlib import Path

import httpx
import pytest
from PIL import Image

pytestmark = pytest.mark.slow


def test_server_endpoints_and_clean_stop(osworld_root: Path, desktop_ready: None) -> None:
    from forge_eval.benchmarks.osworld import LocalDesktop
    from forge_eval.benchmarks.osworld.install import desktop_site

    desktop = LocalDesktop(site_dir=desktop_site(), tree=osworld_root).start()
    assert desktop.client is not None and desktop.state is not None
    client, uid, state = desktop.client, desktop.uid, desktop.state
    try:
        url = client.url
        # upstream's in-VM server, unchanged, in the read-only tools folder (root's), run by the desktop user
        main = state / "tools/server/main.py"
        assert main.read_bytes() == (osworld_root / "desktop_env/server/main.py").read_bytes()
        assert main.stat().st_uid == main.parent.stat().st_uid == 0
        # the session and the server (Werkzeug's reloader and its serving child) run as the desktop user,
        # not dumpable: their /proc entries are root's, so no process of that uid may trace them
        held = [p for p in desktop.processes() if re.search(rb"/(serve|session)\.py\0", _cmdline(p))]
        assert len(held) == 3, [_cmdline(p) for p in desktop.processes()]
        assert {_uid_of(str(p)) for p in held} == {uid}
        assert {Path(f"/proc/{p}/fd").stat().st_uid for p in held} == {0}
        assert len(httpx.get(f"{url}/cursor_position", timeout=10).json()) == 2  # upstream's alone
        shot = Image.open(io.BytesIO(httpx.get(f"{url}/screenshot", timeout=30).content))
        assert shot.size == (1920, 1080)
        ran = client.execute(["id", "-un"])
        assert ran["output"].strip() == "user" and ran["returncode"] == 0  # OSWorld's user name
        assert client.execute(["id", "-u"])["output"].strip() == str(uid) != "0"
        ran = client.execute(["python", "-c", "import pyautogui; print(pyautogui.size())"])
        assert "1920" in ran["output"], ran
        client.upload("/home/user/Desktop/a.txt", b"hi")
        assert (desktop.home / "Desktop/a.txt").stat().st_uid == uid
        assert client.read("/home/user/Desktop/a.txt") == b"hi"
        assert client.read("/home/user/none") is None
        assert "Openbox" in client.execute(["wmctrl", "-m"])["output"]  # windows are managed from the start
        tree = httpx.get(f"{url}/accessibility", timeout=60).json()["AT"]
        assert tree.startswith("<desktop-frame")
        # An app, and a process that left its parent behind (double fork): both must go with the desktop.
        client.launch(["vlc", "--no-audio"])
        client.execute("setsid sleep 600 >/dev/null 2>&1 &", shell=True)
        assert client.wait_for_window("VLC", 30)
        assert len(desktop.processes()) >= 3
    finally:
        desktop.stop()
    assert not [p for p in os.listdir("/proc") if p.isdigit() and _uid_of(p) == uid]
    assert not state.exists()
    with pytest.raises(httpx.HTTPError):
        httpx.get(f"{url}/platform", timeout=2)


def test_the_x_server_does_not_reset_when_its_last_client_leaves() -> None:
    """A reset refuses the clients that connect meanwhile: openbox, started as the desktop's readiness check
    left, now and then was, and that desktop ran without a window manager. A reset clears the root window's
    properties, so one set by a client that then left must still be there."""
    from forge_eval.benchmarks.osworld._inside.session import xvfb_argv

    if shutil.which("Xvfb") is None or shutil.which("xprop") is None:
        pytest.skip("Xvfb or xprop not installed (scripts/setup.d/60-desktop.sh)")
    number = next(n for n in range(90, 200) if not Path(f"/tmp/.X{n}-lock").exists())
    env = {**os.environ, "DISPLAY": f":{number}"}
    argv = xvfb_argv(f":{number}", 64, 64)
    xvfb = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 15
        while subprocess.run(["xprop", "-root"], env=env, capture_output=True).returncode != 0:
            assert xvfb.poll() is None and time.monotonic() < deadline, "Xvfb did not come up"
            time.sleep(0.1)
        set_it = ["xprop", "-root", "-f", "FORGE_PROBE", "8s", "-set", "FORGE_PROBE", "kept"]
        subprocess.run(set_it, env=env, check=True)
        time.sleep(0.5)  # the server is without clients now
        read = subprocess.run(["xprop", "-root", "FORGE_PROBE"], env=env, capture_output=True, text=True)
        assert '"kept"' in read.stdout, read.stdout + read.stderr
    finally:
        xvfb.terminate()
        xvfb.wait(10)


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


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

    pyproject = tomllib.loads((Path(__file__).parents[3] / "pyproject.toml").read_text())
    assert sorted(pyproject["project"]["optional-dependencies"]["osworld"]) == sorted(CHECKER_PACKAGES)
