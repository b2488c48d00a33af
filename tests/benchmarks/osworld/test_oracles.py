"""Replay scripts solve real OSWorld-Verified tasks on the real local desktop, scored by OSWorld's checkers.

For each task one desktop is started and set up by OSWorld's own SetupController. It is scored first
with no action taken (a do-nothing run: must fail), then the oracle acts and it is scored again (must
pass). Infeasible tasks score 1 only when the last action is FAIL, and a solved feasible task that ends
with FAIL scores 0, as upstream. After every episode nothing of the desktop may be left behind. The
setup, getters and metrics are the pinned OSWorld tree's (one of the tasks, 5ac2891a, uses a metric
that PyPI's desktop-env 1.0.2 lacks).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.benchmarks.osworld._oracles import INFEASIBLE, ORACLES

pytestmark = pytest.mark.slow


def _episode(root: Path, task_id: str):  # type: ignore[no-untyped-def]
    from forge_eval.benchmarks.osworld import load_tasks, make_provider, start_episode

    (task,) = load_tasks(root, task_ids=task_id)
    return start_episode(
        task,
        make_provider("local", root),
        tree=root,
        action_space="pyautogui",
        observation_type="screenshot",
        pause=0.3,
    )


def _assert_nothing_left() -> None:
    from forge_eval.benchmarks.osworld._desktop import STATE_ROOT

    # this process's desktops only (owner: "pid start-time uid"): other runs on the machine may hold theirs
    mine = [d for d in STATE_ROOT.glob("desktop-*") if _owner_pid(d) == os.getpid()]
    assert not mine, "a desktop's state folder (its home) is left"


def _owner_pid(state: Path) -> int | None:
    try:
        return int((state / "owner").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


@pytest.mark.parametrize("task_id", sorted(ORACLES))
def test_oracle_solves_and_doing_nothing_fails(osworld_root: Path, desktop_ready: None, task_id: str) -> None:
    from forge_eval.benchmarks.osworld import evaluate

    assert len(ORACLES) >= 11
    episode = _episode(osworld_root, task_id)
    try:
        nothing, why_nothing = evaluate(episode)
        episode.env.step(ORACLES[task_id][1])
        episode.env.step("DONE")
        solved, why = evaluate(episode)
        if task_id == sorted(ORACLES)[0]:
            # Upstream: a feasible task whose last action is FAIL scores 0, even when it was done.
            episode.env.step("FAIL")
            assert evaluate(episode)[0] == 0.0
    finally:
        episode.session.stop()
    _assert_nothing_left()
    assert nothing == 0.0, why_nothing
    assert solved == 1.0, why


@pytest.mark.parametrize("task_id", INFEASIBLE)
def test_infeasible_scores_one_only_for_fail(osworld_root: Path, desktop_ready: None, task_id: str) -> None:
    from forge_eval.benchmarks.osworld import evaluate

    episode = _episode(osworld_root, task_id)
    try:
        assert episode.task.infeasible
        assert evaluate(episode)[0] == 0  # no action
        episode.env.step("DONE")
        assert evaluate(episode)[0] == 0  # claims success
        episode.env.step("FAIL")
        assert evaluate(episode)[0] == 1  # says it cannot be done
    finally:
        episode.session.stop()
    _assert_nothing_left()
