"""OSWorld's `docker` provider beside `local`: how long a desktop and a task take to start, and whether the
checker's verdicts agree.

First a bare desktop (session, server, channels; no app) is started and stopped `--repeat` times per
provider, alternating. Then for each task the local desktop runs here, one episode per provider in turn:
the provider's fresh desktop with the task's apps at their first-run state and OSWorld's own setup steps
(`start_episode`), timed, then OSWorld's checker on the untouched desktop (doing nothing, which must give
the same verdict on both). It prints each time side by side with the docker/local ratio, then the medians.
Needs root and a running docker engine with the desktop image (scripts/setup.d/65-container-engine.sh).
Nothing else should run on the machine meanwhile.

    python bench/osworld_providers.py [--tasks ID,ID] [--limit N] [--repeat N] [--data-dir TREE]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from datetime import UTC, datetime
from pathlib import Path

from forge_eval.benchmarks.osworld import (
    ContainerDesktop,
    LocalDesktop,
    evaluate,
    load_tasks,
    make_provider,
    start_episode,
)
from forge_eval.benchmarks.osworld._data import data_root
from forge_eval.benchmarks.osworld._image import ensure_image
from forge_eval.benchmarks.osworld._support import split_runnable, support_context
from forge_eval.benchmarks.osworld.install import desktop_site

#: The desktop each provider starts, given the tree.
DESKTOPS = {
    "local": lambda tree: LocalDesktop(site_dir=desktop_site(), tree=tree),
    "docker": lambda tree: ContainerDesktop(engine="docker", site_dir=desktop_site(), tree=tree),
}
PROVIDERS = tuple(DESKTOPS)


def bare_start(provider: str, tree: Path) -> float:
    """Seconds until a fresh desktop's server answers (stop not counted)."""
    started = time.monotonic()
    desktop = DESKTOPS[provider](tree).start()
    took = time.monotonic() - started
    desktop.stop()
    return took


def task_start(provider: str, tree: Path, task) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    """Seconds to a set-up episode (desktop, first-run state, the task's setup steps), and the verdict of
    doing nothing."""
    started = time.monotonic()
    episode = start_episode(
        task,
        make_provider(provider, tree),
        tree=tree,
        action_space="pyautogui",
        observation_type="screenshot",
        pause=0.3,
    )
    took = time.monotonic() - started
    try:
        verdict, _ = evaluate(episode)
    finally:
        episode.session.stop()
    return took, verdict


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", help="comma-separated task ids (default: every task local runs here)")
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--repeat", type=int, default=3, help="bare desktop starts per provider")
    parser.add_argument("--data-dir", default=None)
    args = parser.parse_args()
    tree = data_root(args.data_dir)
    print(f"desktop image: {ensure_image('docker')}")
    tasks, _ = split_runnable(load_tasks(tree, task_ids=args.tasks), support_context("local", tree))
    tasks = tasks[: args.limit] if args.limit else tasks
    print(
        f"# {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, {os.cpu_count()} CPUs, "
        f"load {os.getloadavg()[0]:.2f}, {len(tasks)} tasks"
    )
    bare: dict[str, list[float]] = {p: [] for p in PROVIDERS}
    for _ in range(args.repeat):
        for provider in PROVIDERS:
            bare[provider].append(bare_start(provider, tree))
    print(
        "bare desktop start, median of "
        f"{args.repeat}: local {statistics.median(bare['local']):.1f} s, "
        f"docker {statistics.median(bare['docker']):.1f} s "
        f"({statistics.median(bare['docker']) / statistics.median(bare['local']):.2f}x)"
    )
    print(f"{'task':10} {'domain':22} {'local s':>8} {'docker s':>9} {'ratio':>6}  verdicts")
    times: dict[str, list[float]] = {p: [] for p in PROVIDERS}
    agree = 0
    for task in tasks:
        took, verdicts = {}, {}
        for provider in PROVIDERS:
            took[provider], verdicts[provider] = task_start(provider, tree, task)
            times[provider].append(took[provider])
        agree += verdicts["local"] == verdicts["docker"]
        print(
            f"{task.id[:8]:10} {task.domain:22} {took['local']:8.1f} {took['docker']:9.1f} "
            f"{took['docker'] / took['local']:6.2f}  {verdicts['local']:.0f}/{verdicts['docker']:.0f}"
        )
    if tasks:
        local, docker = statistics.median(times["local"]), statistics.median(times["docker"])
        print(
            f"median task start: local {local:.1f} s, docker {docker:.1f} s ({docker / local:.2f}x); "
            f"verdicts equal on {agree}/{len(tasks)}"
        )


if __name__ == "__main__":
    main()
