"""OSWorld's waits side by side: upstream's fixed 60 s + 20 s against `-T waits=ready`, every runnable task.

For each task of the pinned tree that the local desktop runs here, and for each policy, one fresh desktop:
OSWorld's own setup steps, the policy's ready wait, the first observation (the accessibility tree and a
screenshot, as the agent would get them), then two scripted agents in turn, each followed by the policy's
settle wait and OSWorld's checker: no action, then a fixed wrong action (a click in an empty corner).
Under `upstream` each desktop starts when its task does (its start is timed apart and printed); under
`ready` it was started ahead, during the previous task's `ready` episode after its first observation, as
`forge-eval run` does for the sample waiting for its turn (`--no-prestart`: started when the task does).
It prints per task whether the two policies gave the same first observation (what the tree says equal,
`tree_text`, and whether the whole tree is, dynamic text masked; screenshots equal but for at most
`STILL_PIXELS` pixels: a caret, the pointer) and the same verdicts, and the environment time of each
(setup start to first observation; last action to verdict), then the medians and the share of identical
verdicts and observations. Nothing else should run on the machine meanwhile.

    python bench/osworld_waits.py [--tasks ID,ID] [--limit N] [--data-dir TREE]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import time
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path

from forge_eval.benchmarks.osworld import evaluate, load_tasks, make_provider, start_episode
from forge_eval.benchmarks.osworld._data import data_root
from forge_eval.benchmarks.osworld._support import split_runnable, support_context
from forge_eval.benchmarks.osworld._task import READY_WAIT, SETTLE_WAIT
from forge_eval.benchmarks.osworld._waits import (
    STILL_PIXELS,
    WAIT_POLICIES,
    changed_pixels,
    grey_screen,
    masked_tree,
    tree_text,
)

WRONG_ACTION = "import pyautogui; pyautogui.click(1910, 1070)"


def episode(  # type: ignore[no-untyped-def]
    tree: Path, task, policy: str, spare: Future | None = None, ahead: ThreadPoolExecutor | None = None
) -> dict:
    """One desktop under `policy` (the `spare` started ahead, or one started now and timed): its first
    observation, both verdicts and environment times; with `ahead`, the next task's desktop is started
    there after the first observation (the result's "spare")."""
    wait = WAIT_POLICIES.get(policy)
    provider = make_provider("local", tree)
    started = time.monotonic()
    desktop = spare.result() if spare is not None else provider.bare_desktop()
    desktop_s = time.monotonic() - started
    run = start_episode(
        task,
        provider,
        tree=tree,
        action_space="pyautogui",
        observation_type="screenshot_a11y_tree",
        pause=0.5,
        desktop=desktop,
    )
    try:
        ready = asyncio.run(wait.ready(run.desktop, READY_WAIT))
        controller = run.env.controller
        png = controller.get_screenshot()
        first = {"tree": controller.get_accessibility_tree(), "screen": grey_screen(png), "png": png}
        to_first = time.monotonic() - started
        following = ahead.submit(provider.bare_desktop) if ahead is not None else None
        verdicts, to_verdict = [], []
        for action in ("DONE", WRONG_ACTION):
            if action != "DONE":
                run.env.step(action)
            acted = time.monotonic()
            settled = asyncio.run(wait.settled(run.desktop, SETTLE_WAIT))
            verdicts.append(evaluate(run)[0])
            to_verdict.append(time.monotonic() - acted)
    finally:
        run.session.stop()
    return {
        "first": first,
        "verdicts": verdicts,
        "to_first": to_first,
        "desktop_s": desktop_s,
        "to_verdict": to_verdict,
        "ready": ready,
        "settled": settled,
        "spare": following,
    }


def _said(same_tree: bool, same_text: bool) -> str:
    return "same" if same_tree else "says the same, roles differ" if same_text else "says other things"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", help="comma-separated task ids (default: every runnable task)")
    parser.add_argument("--limit", type=int, help="only the first N runnable tasks")
    parser.add_argument("--data-dir", help="the OSWorld tree (default: the pinned tree forge-eval locates)")
    parser.add_argument("--keep", type=Path, help="write each policy's first observation (tree, PNG) here")
    parser.add_argument("--no-prestart", action="store_true", help="start each ready desktop with its task")
    args = parser.parse_args()
    tree = data_root(args.data_dir)
    tasks, skipped = split_runnable(load_tasks(tree, task_ids=args.tasks), support_context("local", tree))
    tasks = tasks[: args.limit] if args.limit else tasks
    print(f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC, {os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}; "
          f"{len(tasks)} runnable tasks ({len(skipped)} skipped here)")
    print(f"{'task':10} {'verdicts up/ready':>18} {'same obs':>9} {'first obs s up/ready':>21} "
          f"{'to verdict s up/ready':>22} {'desktop start s up/ready':>25}  ready waited for")
    rows = []
    starter = ThreadPoolExecutor(max_workers=1)
    spare: Future | None = None
    for i, task in enumerate(tasks):
        up = episode(tree, task, "upstream")
        ahead = starter if not args.no_prestart and i + 1 < len(tasks) else None
        ready = episode(tree, task, "ready", spare, ahead)
        spare = ready["spare"]
        if args.keep:
            for name, run in (("upstream", up), ("ready", ready)):
                args.keep.mkdir(parents=True, exist_ok=True)
                (args.keep / f"{task.id}.{name}.xml").write_text(run["first"]["tree"] or "")
                (args.keep / f"{task.id}.{name}.png").write_bytes(run["first"]["png"] or b"")
        same_tree = masked_tree(up["first"]["tree"]) == masked_tree(ready["first"]["tree"])
        same_text = tree_text(up["first"]["tree"]) == tree_text(ready["first"]["tree"])
        a, b = up["first"]["screen"], ready["first"]["screen"]
        pixels = changed_pixels(a, b) if a is not None and b is not None else -1
        same = same_text and 0 <= pixels <= STILL_PIXELS
        rows.append((up, ready, same))
        print(f"{task.id[:8]:10} {str(up['verdicts']):>9}/{str(ready['verdicts']):<9} {str(same):>9} "
              f"{up['to_first']:>10.1f}/{ready['to_first']:<10.1f} "
              f"{sum(up['to_verdict']):>11.1f}/{sum(ready['to_verdict']):<10.1f} "
              f"{up['desktop_s']:>12.1f}/{ready['desktop_s']:<12.1f} "
              f"{ready['ready'].reason} ({ready['ready'].waited_s:.1f} s); "
              + ("" if same_tree and same else f"tree {_said(same_tree, same_text)}, {pixels} pixels differ"))
    if not rows:
        return
    same_verdicts = sum(up["verdicts"] == ready["verdicts"] for up, ready, _ in rows)
    same_obs = sum(same for *_, same in rows)

    def median_overhead(key: int) -> float:
        return statistics.median(row[key]["to_first"] + sum(row[key]["to_verdict"]) / 2 for row in rows)

    print(f"identical verdicts: {same_verdicts}/{len(rows)} ({100 * same_verdicts / len(rows):.0f}%); "
          f"identical first observations: {same_obs}/{len(rows)} ({100 * same_obs / len(rows):.0f}%)")
    up_s, ready_s = median_overhead(0), median_overhead(1)
    print(f"median environment time per task (setup to first observation + last action to verdict): "
          f"upstream {up_s:.1f} s, ready {ready_s:.1f} s ({ready_s / up_s:.2f}x)")
    up_start = statistics.median(up["desktop_s"] for up, _, _ in rows)
    ready_start = statistics.median(ready["desktop_s"] for _, ready, _ in rows)
    print(f"median desktop start on the critical path: {up_start:.1f} s started with its task (upstream), "
          f"{ready_start:.1f} s {'started with its task' if args.no_prestart else 'started ahead'} (ready)")


if __name__ == "__main__":
    main()
