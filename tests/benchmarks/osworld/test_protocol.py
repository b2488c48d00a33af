"""OSWorld's protocol record: the pinned tree's baseline protocol on OSWorld's VM is the official side."""

from __future__ import annotations

import inspect
import shutil
from pathlib import Path
from typing import Any

from forge_eval.benchmarks import BENCHMARKS, RunUsed


def _used(root: Path, **changes: Any) -> RunUsed:
    """A run at the task's defaults on all 369 tasks with OSWorld's own VM provider, then `changes`."""
    from forge_eval.benchmarks.osworld import load_tasks, osworld

    args = {n: p.default for n, p in inspect.signature(osworld).parameters.items() if n != "seed"}
    args |= {"data_dir": str(root), "provider": "vm", **changes.pop("task_args", {})}
    run = {
        "harness": "computer",
        "task_args": args,
        "sampling": {"max_tokens": 1500, "top_p": 0.9, "temperature": 1.0},
        "task_ids": tuple(sorted(t.id for t in load_tasks(root))),
    }
    return RunUsed(**{**run, **changes})


def _differing(record: Any) -> set[str]:
    return {e.element for e in record.elements if not e.matches}


def test_the_baseline_protocol_on_the_pinned_tree_is_comparable(osworld_root: Path) -> None:
    record = BENCHMARKS.get("osworld").protocol(_used(osworld_root))
    assert record.reasons == [] and record.comparable is True
    prompt = record.of("agent_prompt")[0].official
    assert prompt.kind == "upstream" and "mm_agents/prompts.py" in prompt.path
    assert prompt.symbol == "the SYS_PROMPT_* of each sample's observation"  # observation "auto"


def test_local_desktop_short_waits_and_our_prompt_are_each_named(osworld_root: Path) -> None:
    entry = BENCHMARKS.get("osworld")
    local = entry.protocol(_used(osworld_root, task_args={"provider": "local"}))
    assert _differing(local) == {"environment"}
    (environment,) = local.of("environment")
    assert environment.ours.value["browser"].endswith(" in place of Google Chrome")
    assert environment.ours.value["browser"].startswith("Chromium ")
    # what differs in GNOME's pieces and sudo is said
    assert "without gnome-shell" in environment.note and "root of a user namespace" in environment.note
    waits = entry.protocol(_used(osworld_root, task_args={"settle_wait": 1.0, "ready_wait": 0.0}))
    assert _differing(waits) == {"harness"} and "settle_wait" in waits.reasons[0]
    ours = entry.protocol(_used(osworld_root, task_args={"prompt": "forge", "observation": "screenshot"}))
    assert _differing(ours) == {"harness", "agent_prompt"}
    assert ours.of("agent_prompt")[0].ours.kind == "ours"
    sampling = entry.protocol(_used(osworld_root, sampling={"max_tokens": 512, "top_p": 0.95}))
    assert _differing(sampling) == {"agent_sampling"}


def test_another_copy_of_the_tree_is_told_apart(osworld_root: Path, tmp_path: Path) -> None:
    tree = tmp_path / "OSWorld"
    shutil.copytree(osworld_root, tree, ignore=shutil.ignore_patterns("__pycache__"))
    metric = tree / "desktop_env/evaluators/metrics/vlc.py"
    original = metric.read_text()
    metric.write_text(original + "\n# edited\n")
    record = BENCHMARKS.get("osworld").protocol(_used(tree))
    assert _differing(record) == {"grader"}
    # the in-VM server the local desktop runs counts as part of the grader too
    metric.write_text(original)
    assert _differing(BENCHMARKS.get("osworld").protocol(_used(tree))) == set()
    server = tree / "desktop_env/server/main.py"
    server.write_text(server.read_text() + "\n# edited\n")
    assert _differing(BENCHMARKS.get("osworld").protocol(_used(tree))) == {"grader"}
