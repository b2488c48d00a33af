"""Chrome tasks on the local desktop: Debian's Chromium as `google-chrome`, scored by OSWorld's checkers.

Each test starts a real desktop, runs the task's setup with OSWorld's SetupController (the tree's
`google-chrome --remote-debugging-port=1337`, its socat, its CDP steps over Playwright), acts as an agent
would (Python on the desktop) and scores with the tree's getters and metrics: the right action 1, doing
nothing or a wrong action 0. The debugging port is the run's alone: a program the agent puts behind it,
Chromium included when it runs a library of the agent's, is refused.
"""

from __future__ import annotations

import copy
import json
import shutil
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

pytestmark = pytest.mark.slow

#: A real Chrome task of the pinned tree: its setup steps and getter (tabs over CDP) and metric are kept,
#: its three live sites replaced by pages the desktop serves itself (the task needs the live web).
TABS_TASK = "06fe7178-4491-4589-810f-2e2bc9502122"
#: A real Chrome task whose needs are all here: the getter reads ~/.config/google-chrome's Preferences.
DO_NOT_TRACK = "030eeff7-b492-4218-b312-701ec99ee0cc"
PREFERENCES = "/home/user/.config/google-chrome/Default/Preferences"
PAGES = [f"http://localhost:8000/{folder}/" for folder in ("Desktop", "Documents", "Music")]

#: Ends the browsers (and a server on 1337) and waits until they are gone (not the zombies the in-desktop
#: server leaves of what it launched): as an agent would before editing Chrome's profile.
_STOP = """\
import json, os, pathlib, subprocess, time
def running():
    for stat in pathlib.Path('/proc').glob('[0-9]*/stat'):
        try:
            text = stat.read_text()
        except OSError:
            continue
        name, state = text[text.index('(') + 1:text.rindex(')')], text[text.rindex(')') + 2]
        if name in ('chrome', 'chromium') and state != 'Z':
            return True
    return False
for pattern in (['-x', 'chrome'], ['-x', 'chromium'], ['-f', 'http[.]server 1337']):
    subprocess.run(['pkill', *pattern])
while running():
    time.sleep(0.2)
time.sleep(0.5)
"""
_PREFERENCE = (
    _STOP
    + """\
path = pathlib.Path.home() / '.config/google-chrome/Default/Preferences'
prefs = json.loads(path.read_text())
prefs[{key!r}] = {value!r}
path.write_text(json.dumps(prefs))
"""
)
_BACKGROUND = (
    _STOP
    + """\
subprocess.Popen({argv!r}, env={env}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                 start_new_session=True)
time.sleep({wait})
"""
)


@pytest.fixture(scope="module")
def chromium(desktop_ready: None) -> None:
    from forge_eval.benchmarks.osworld._chrome import CHROMIUM

    if not CHROMIUM.is_file() or shutil.which("socat") is None:
        pytest.skip("Chromium or socat not installed (scripts/setup.d/50-chromium.sh, 35-sandbox.sh)")


def _episode(root: Path, raw: dict[str, Any]):  # type: ignore[no-untyped-def]
    from forge_eval.benchmarks.osworld import OSWorldTask, make_provider, start_episode

    return start_episode(
        OSWorldTask("chrome", raw),
        make_provider("local", root),
        tree=root,
        action_space="pyautogui",
        observation_type="screenshot",
        pause=1.0,
    )


def _task(root: Path, task_id: str) -> dict[str, Any]:
    from forge_eval.benchmarks.osworld import load_tasks

    (task,) = load_tasks(root, task_ids=task_id)
    return copy.deepcopy(task.raw)


def _tabs_task(root: Path) -> dict[str, Any]:
    raw = _task(root, TABS_TASK)
    launch, socat, open_tabs, close_tabs = raw["config"]
    assert open_tabs["type"] == "chrome_open_tabs" and close_tabs["type"] == "chrome_close_tabs"
    serve = ["python", "-m", "http.server", "8000", "--bind", "127.0.0.1", "--directory", "/home/user"]
    open_tabs["parameters"]["urls_to_open"] = PAGES
    close_tabs["parameters"]["urls_to_close"] = PAGES[2:]
    server = {"type": "launch", "parameters": {"command": serve}}
    raw["config"] = [launch, socat, server, open_tabs, close_tabs]
    raw["evaluator"]["expected"]["rules"]["urls"] = PAGES
    return raw


def test_tabs_over_the_debugging_port_reopen_the_closed_tab(osworld_root: Path, chromium: None) -> None:
    from forge_eval.benchmarks.osworld import evaluate

    episode = _episode(osworld_root, _tabs_task(osworld_root))
    try:
        # the tasks' `pkill chrome` finds the browser by that name, as it finds Google Chrome
        running = episode.env.controller.execute_python_command(
            "import subprocess; print(subprocess.run(['pgrep', '-x', 'chrome'], capture_output=True).stdout)"
        )
        assert running["output"].strip() not in ("", "b''"), running
        nothing, why_nothing = evaluate(episode)
        episode.env.step("import pyautogui; pyautogui.hotkey('ctrl', 'shift', 't')")
        solved, why = evaluate(episode)
        episode.env.step("import pyautogui; pyautogui.hotkey('ctrl', 'w')")  # closes a tab instead
        wrong, why_wrong = evaluate(episode)
    finally:
        episode.session.stop()
    assert nothing == 0.0, why_nothing
    assert solved == 1.0, why
    assert wrong == 0.0, why_wrong


def test_do_not_track_is_read_from_chromes_profile(osworld_root: Path, chromium: None) -> None:
    from forge_eval.benchmarks.osworld import evaluate

    raw = _task(osworld_root, DO_NOT_TRACK)
    episode = _episode(osworld_root, raw)
    try:
        _wait_for_file(episode, PREFERENCES)  # Chromium writes its profile a few seconds after it starts
        # the a11y_tree observation shows Chromium, as it shows Chrome on OSWorld's GNOME image (an empty
        # desktop-frame without ACCESSIBILITY_ENABLED)
        tree = episode.env.controller.get_accessibility_tree() or ""
        assert "Address and search bar" in tree, tree[:2000]
        prefs = episode.env.controller.get_file(PREFERENCES)
        assert prefs is not None and "enable_do_not_track" not in json.loads(prefs)
        nothing, why_nothing = evaluate(episode)  # postconfig: pkill chrome, google-chrome again
        episode.env.step(_PREFERENCE.format(key="safebrowsing", value={"enabled": True}))
        wrong, why_wrong = evaluate(episode)
        episode.env.step(_PREFERENCE.format(key="enable_do_not_track", value=True))
        solved, why = evaluate(episode)
    finally:
        episode.session.stop()
    assert nothing == 0.0, why_nothing
    assert wrong == 0.0, why_wrong
    assert solved == 1.0, why


def _wait_for_file(episode: Any, path: str, seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    check = f"import os; print(os.path.exists({path!r}))"
    while episode.env.controller.execute_python_command(check)["output"].strip() != "True":
        assert time.monotonic() < deadline, f"{path} was not written within {seconds:.0f} s"
        time.sleep(1)


def _version(port: int) -> str | None:
    """The browser the host reaches on the debugging port, or None when the run's channel refuses."""
    try:
        return httpx.get(f"http://127.0.0.1:{port}/json/version", timeout=10).json()["Browser"]
    except (httpx.HTTPError, ValueError):
        return None


def _browser_on(port: int, seconds: float = 30.0) -> str | None:
    """The browser the host reaches on `port` once one answers (None if none within `seconds`)."""
    deadline = time.monotonic() + seconds
    while (found := _version(port)) is None and time.monotonic() < deadline:
        time.sleep(0.5)
    return found


def test_the_debugging_port_refuses_what_the_agent_puts_behind_it(osworld_root: Path, chromium: None) -> None:
    episode = _episode(osworld_root, _task(osworld_root, DO_NOT_TRACK))
    port = episode.session.chromium_port
    inside = (
        "import urllib.request; print(urllib.request.urlopen('http://127.0.0.1:1337/json/version').status)"
    )
    try:
        assert (_browser_on(port) or "").startswith("Chrome/")
        fake = ["python", "-m", "http.server", "1337", "--bind", "127.0.0.1"]
        episode.env.step(_BACKGROUND.format(argv=fake, env="dict(os.environ)", wait=2))
        served = episode.env.controller.execute_python_command(inside.replace("/json/version", "/"))
        assert served["output"].strip() == "200", served  # it does serve inside the desktop
        assert _version(port) is None
        # Chromium itself, with a library of the agent's preloaded: a real browser the agent answers for
        preload = (
            "dict(os.environ, LD_PRELOAD='/tmp/inject.so') if __import__('shutil').copy("
            "next(pathlib.Path('/usr/lib').glob('*/libz.so.1')), '/tmp/inject.so') else None"
        )
        chromium = ["/usr/lib/chromium/chromium", "--remote-debugging-port=1337", "--no-first-run"]
        episode.env.step(_BACKGROUND.format(argv=chromium, env=preload, wait=8))
        answered = episode.env.controller.execute_python_command(inside)
        assert answered["output"].strip() == "200", answered
        assert _version(port) is None
        relaunched = ["google-chrome", "--remote-debugging-port=1337"]
        episode.env.step(_BACKGROUND.format(argv=relaunched, env="dict(os.environ)", wait=1))
        assert (_browser_on(port) or "").startswith("Chrome/")
    finally:
        episode.session.stop()


def test_online_chromium_goes_out_through_the_egress_gate_alone(osworld_root: Path, chromium: None) -> None:
    """Online, the desktop's Chromium reaches the web through the run's egress gate, whose policy (the web
    benchmarks') refuses private and loopback addresses; the host's loopback stays out of reach."""
    import http.server
    import threading

    from playwright.sync_api import Error, sync_playwright

    from forge_eval.benchmarks.osworld import LocalDesktop
    from forge_eval.benchmarks.osworld._chrome import DEBUG_PORT
    from forge_eval.benchmarks.osworld.install import desktop_site

    host_server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler)
    threading.Thread(target=host_server.serve_forever, daemon=True).start()
    desktop = LocalDesktop(site_dir=desktop_site(), tree=osworld_root, egress=True).start()
    try:
        assert desktop.client is not None and desktop._egress is not None
        desktop.client.launch(["google-chrome", "--remote-debugging-port=1337"])
        assert (_browser_on(desktop.ports[DEBUG_PORT]) or "").startswith("Chrome/")
        with sync_playwright() as p:
            browser = p.chromium.connect_over_cdp(f"http://127.0.0.1:{desktop.ports[DEBUG_PORT]}")
            page = browser.contexts[0].new_page()
            for url in ("http://192.168.77.1:8080/", f"http://127.0.0.1:{host_server.server_port}/"):
                with pytest.raises(Error):
                    page.goto(url, timeout=20_000)
        refusals = desktop._egress.gate.refusals
        assert "private" in refusals[("192.168.77.1", 8080)], refusals
    finally:
        desktop.stop()
        host_server.shutdown()
    assert desktop._egress is None
