"""weblab: every task solved by its scripted oracle through the real browser; doing nothing fails them."""

from __future__ import annotations

from collections import Counter

import pytest

from forge_eval.benchmarks.web import BrowserConfig, WebEnv
from forge_eval.benchmarks.weblab import (
    SITES,
    TASKS,
    WebTask,
    host_map,
    run_oracle,
    site_state,
    sites,
    verify,
)
from tests.web.conftest import LoopRunner


def test_the_benchmark_has_enough_varied_tasks() -> None:
    assert len(TASKS) >= 30 and len(SITES.names()) >= 5
    kinds = Counter(t.kind for t in TASKS)
    assert kinds["info"] >= 10 and kinds["action"] >= 8
    assert set(Counter(t.difficulty for t in TASKS)) == {"easy", "medium", "hard"}
    assert len({t.id for t in TASKS}) == len(TASKS)


async def _episode(task: WebTask, world: str, oracle: bool) -> tuple[bool, str, int]:
    cluster = sites()
    async with WebEnv(BrowserConfig(host_map=host_map(cluster)), world=world, aria=False) as env:
        await env.start(SITES.get(task.site).url, task=task.prompt)
        if oracle:
            try:
                await run_oracle(env, task)
            except Exception as e:
                raise AssertionError(f"oracle of {task.id} failed at {env.page.url}: {e}") from e
        state = await site_state(task.site, world) if task.kind == "action" else None
        verdict = verify(task, env.trajectory.answer, state)
        errors = [s.error for s in env.trajectory.steps if s.error]
        assert not errors, errors
        return verdict.passed, verdict.explanation, len(env.trajectory.steps)


@pytest.mark.slow
def test_every_task_is_solved_by_its_oracle_and_fails_when_nothing_is_done(run: LoopRunner) -> None:
    async def main() -> None:
        failures = []
        for task in TASKS:
            passed, why, steps = await _episode(task, f"oracle-{task.id}", oracle=True)
            if not passed:
                failures.append((task.id, why))
            assert steps >= 1
            idle, why_idle, _ = await _episode(task, f"idle-{task.id}", oracle=False)
            assert not idle, (task.id, why_idle)
        assert not failures, failures

    run(main())


def test_one_task_per_site_through_the_browser(run: LoopRunner) -> None:
    """The fast sample of the above: one task of each site, oracle passes and worlds stay separate."""

    async def main() -> None:
        seen: set[str] = set()
        for task in TASKS:
            if task.site in seen:
                continue
            seen.add(task.site)
            passed, why, _ = await _episode(task, f"fast-{task.id}", oracle=True)
            assert passed, (task.id, why)
        # An action task's world is separate: a fresh world has an unchanged state.
        action = next(t for t in TASKS if t.kind == "action")
        assert not verify(action, None, await site_state(action.site, "never-used")).passed

    run(main())
