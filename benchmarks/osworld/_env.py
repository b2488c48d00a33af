"""One OSWorld episode on a desktop reached through a controller URL, driven by OSWorld's own code.

`DesktopEnv` (from the pinned OSWorld tree) holds the upstream rules that matter for comparability:
how an action is executed in each action space, that WAIT/DONE/FAIL are special, that `postconfig` runs
before scoring, that an infeasible task scores 1 iff the last action is FAIL and any other task scores
0 after FAIL, and how several metrics combine. `make_env` builds a DesktopEnv *without* its VM-provider
constructor and points its controllers at our controller; `step` and `evaluate` are upstream's.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from forge_eval.benchmarks.osworld._evaluators import desktop_env

#: OSWorld's action spaces (agent output formats) and observation types.
ACTION_SPACES = ("pyautogui", "computer_13")
OBSERVATION_TYPES = ("screenshot", "a11y_tree", "screenshot_a11y_tree")
#: The step caps OSWorld-Verified reports results at.
STEP_CAPS = (15, 50, 100)
#: Seconds between the controller client's retries (OSWorld: 5).
RETRY_INTERVAL = 0.2


def make_env(
    task: dict[str, Any],
    *,
    tree: Path,
    host: str,
    port: int,
    vlc_port: int = 8080,
    chromium_port: int = 9222,
    files_dir: Path,
    cache_dir: Path,
    action_space: str = "pyautogui",
    observation_type: str = "screenshot",
    screen: tuple[int, int] = (1920, 1080),
    pause: float = 2.0,
) -> Any:
    """A `DesktopEnv` for `task`, its controllers pointed at http://host:port.

    Args:
        task: The task JSON.
        tree: The OSWorld tree whose `desktop_env` runs the episode (the task's own tree).
        vlc_port: Where VLC's HTTP interface is reached (OSWorld's `vlc_port`).
        chromium_port: Where Chrome's debugging port is reached (OSWorld's `chromium_port`).
        files_dir: Where setup downloads are cached (OSWorld's `<uuid5(url)>_<name>` layout).
        cache_dir: This task's scratch folder for the checkers (fetched files, expected files).
        pause: Seconds to wait after each action before observing (OSWorld: `sleep_after_execution`).
    """
    api = desktop_env(tree)

    class HostDesktopEnv(api.DesktopEnv):  # type: ignore[misc, name-defined]
        def __init__(self) -> None:  # upstream's constructor starts a VM provider: none here
            pass

        def step(self, action: Any, pause: float = pause) -> Any:
            return super().step(action, pause)

    env = HostDesktopEnv()
    width, height = screen
    env.vm_ip, env.server_port, env.chromium_port, env.vlc_port = host, port, chromium_port, vlc_port
    env.action_space = action_space
    env.require_a11y_tree = "a11y_tree" in observation_type
    env.require_terminal = False
    env.enable_proxy = env.current_use_proxy = False
    env.client_password = "password"
    env.screen_width, env.screen_height = width, height
    env.controller = api.PythonController(vm_ip=host, server_port=port)
    # Upstream retries a missing file 3 times, 5 s apart (a VM's server may lag); a local desktop's
    # server answers at once.
    env.controller.retry_interval = RETRY_INTERVAL
    os.makedirs(cache_dir, exist_ok=True)
    os.makedirs(files_dir, exist_ok=True)
    env.setup_controller = api.SetupController(
        vm_ip=host,
        server_port=port,
        chromium_port=chromium_port,
        cache_dir=str(files_dir),
        client_password="password",
        screen_width=width,
        screen_height=height,
    )
    env.cache_dir_base = str(cache_dir.parent)
    env.cache_dir = str(cache_dir)
    env.task_id = task["id"]
    env.instruction = task["instruction"]
    env.config = task.get("config", [])
    env._set_evaluator_info(task)
    env.action_history = []
    env._step_no = env._traj_no = 0
    env.is_environment_used = False
    return env
