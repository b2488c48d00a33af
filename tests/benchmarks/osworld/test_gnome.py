"""GNOME's pieces on the local desktop, without gnome-shell, scored by upstream's getters and metrics.

The pinned tree's GNOME tasks that need no task files are oracles (test_oracles: gsettings, the terminal's
text). These tasks are built on the tree's own setup steps and getters where every real one downloads its
files: the wallpaper getter (`vm_wallpaper`: gsettings' picture-uri, served by the in-desktop server),
gnome-terminal started as the tree's steps start it (on the session bus at /run/user/1000/bus, ended by
`killall gnome-terminal-server` before the check, its bash history read): on the real desktop the right
action scores 1 and a wrong one 0. Nautilus, launched on a folder as the tree's steps do, is only checked
to open it (the tree's nautilus tasks score files, whatever made them).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.slow

_IMAGES = """\
from PIL import Image
gold = Image.new('L', (320, 200))
gold.putdata([255 * ((y // 20) % 2) for y in range(200) for x in range(320)])
gold.save('/home/user/Pictures/gold.png')
other = Image.new('L', (320, 200))
other.putdata([255 * ((x // 7 + y // 13) % 2) for y in range(200) for x in range(320)])
other.save('/home/user/Pictures/other.png')
"""
WALLPAPER = {
    "id": "forge-gnome-wallpaper",
    "instruction": "Make gold.png in Pictures the desktop background.",
    "config": [{"type": "execute", "parameters": {"command": ["python", "-c", _IMAGES]}}],
    "evaluator": {  # as efcf0d81's, with the gold image made on the desktop instead of downloaded
        "func": "compare_images",
        "result": {"type": "vm_wallpaper", "dest": "result_wallpaper.png"},
        "expected": {"type": "vm_file", "path": "/home/user/Pictures/gold.png", "dest": "gold.png"},
        "options": {"reference_base_result": 0.11},
    },
}
_SET_WALLPAPER = """\
import subprocess
subprocess.run(['gsettings', 'set', 'org.gnome.desktop.background', 'picture-uri',
                'file:///home/user/Pictures/{name}'], check=True)
"""
TERMINAL = {
    "id": "forge-gnome-terminal",
    "instruction": "From the terminal, create an empty file from-terminal on the Desktop.",
    "config": [  # 2b9493d7's steps, without its download
        {
            "type": "execute",
            "parameters": {"command": ["/bin/bash", "-c", "history -c && echo > ~/.bash_history && sleep 3"]},
        },
        {
            "type": "execute",
            "parameters": {
                "command": "export DBUS_SESSION_BUS_ADDRESS='unix:path=/run/user/1000/bus'\n"
                "gnome-terminal --maximize --working-directory=/home/user/",
                "shell": True,
            },
        },
        {"type": "sleep", "parameters": {"seconds": 3}},
    ],
    "evaluator": {
        "postconfig": [
            {
                "type": "execute",
                "parameters": {"command": ["/bin/bash", "-c", "killall gnome-terminal-server"]},
            },
            {"type": "sleep", "parameters": {"seconds": 1}},
        ],
        "func": "check_include_exclude",
        "result": {
            "type": "vm_command_line",
            "command": [
                "/bin/bash",
                "-c",
                "[ -f ~/Desktop/from-terminal ] && echo 'file made'; "
                "grep -q '[f]rom-terminal' ~/.bash_history && echo 'typed in terminal' || echo 'not typed'",
            ],
        },
        "expected": {
            "type": "rule",
            "rules": {"include": ["file made", "typed in terminal"], "exclude": ["not typed"]},
        },
    },
}
_TYPE_IN_TERMINAL = """\
import pyautogui, time
pyautogui.typewrite('touch ~/Desktop/from-terminal', interval=0.03)
pyautogui.press('enter')
time.sleep(1)
"""
_WITHOUT_TERMINAL = "import pathlib\npathlib.Path('/home/user/Desktop/from-terminal').touch()\n"
NAUTILUS = {
    "id": "forge-gnome-nautilus",
    "instruction": "Open the Papers folder.",
    "config": [  # b5062e3e's launch step, on a folder made here instead of downloaded
        {"type": "execute", "parameters": {"command": ["mkdir", "-p", "/home/user/Documents/Papers"]}},
        {"type": "launch", "parameters": {"command": ["nautilus", "/home/user/Documents/Papers"]}},
        {"type": "sleep", "parameters": {"seconds": 5}},
    ],
    "evaluator": {"func": "infeasible"},
}


def _score(root: Path, raw: dict[str, Any], action: str) -> tuple[float, str, list[str]]:
    """Start the task on a fresh desktop, take `action`, and score it with upstream's checker."""
    from forge_eval.benchmarks.osworld import OSWorldTask, evaluate, make_provider, start_episode
    from forge_eval.benchmarks.osworld._client import DesktopClient

    task = OSWorldTask("os", raw)
    episode = start_episode(
        task,
        make_provider("local", root),
        tree=root,
        action_space="pyautogui",
        observation_type="screenshot",
        pause=0.3,
    )
    try:
        client = DesktopClient(episode.session.host, episode.session.port)
        titles = client.window_titles()
        client.close()
        episode.env.step(action)
        episode.env.step("DONE")
        return (*evaluate(episode), titles)
    finally:
        episode.session.stop()


def test_wallpaper_getter_reads_gsettings(osworld_root: Path, desktop_ready: None) -> None:
    solved, why, _ = _score(osworld_root, WALLPAPER, _SET_WALLPAPER.format(name="gold.png"))
    assert solved == 1.0, why
    assert _score(osworld_root, WALLPAPER, _SET_WALLPAPER.format(name="other.png"))[0] == 0.0


def test_gnome_terminal_started_as_the_tree_does(osworld_root: Path, desktop_ready: None) -> None:
    solved, why, titles = _score(osworld_root, TERMINAL, _TYPE_IN_TERMINAL)
    assert "Terminal" in titles, titles
    assert solved == 1.0, why
    assert _score(osworld_root, TERMINAL, _WITHOUT_TERMINAL)[0] == 0.0


def test_nautilus_launched_on_a_folder(osworld_root: Path, desktop_ready: None) -> None:
    from forge_eval.benchmarks.osworld import OSWorldTask, make_provider, start_episode
    from forge_eval.benchmarks.osworld._client import DesktopClient

    provider = make_provider("local", osworld_root)
    task = OSWorldTask("os", NAUTILUS)
    episode = start_episode(
        task, provider, tree=osworld_root, action_space="pyautogui", observation_type="screenshot", pause=0.3
    )
    client = DesktopClient(episode.session.host, episode.session.port)
    try:
        # titled "Loading…" until the folder is read, which under this machine's load took 5-30 s
        assert client.wait_for_window("Papers", 90), client.window_titles()
    finally:
        client.close()
        episode.session.stop()
