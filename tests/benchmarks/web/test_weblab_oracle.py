"""weblab: every task solved by its scripted oracle through the real browser; doing nothing fails them."""

from __future__ import annotations

import asyncio
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
from tests.benchmarks.web.conftest import LoopRunner


def test_the_benchmark_has_enough_varied_tasks() -> None:
    assert len(TASKS) >= 30 and len(SITES.names()) >= 5
    kinds = Counter(t.kind for t in TASKS)
    assert kinds["info"] >= 10 and kinds["action"] >= 8
    assert set(Counter(t.difficulty for t in TASKS)) == {"easy", "medium", "hard"}
    assert len({t.id for t in TASKS}) == len(TASKS)


async def _solve(task: WebTask, gate: asyncio.Semaphore) -> tuple[str, bool, str]:
    world = f"oracle-{task.id}"
    async with gate, WebEnv(BrowserConfig(host_map=host_map(sites())), world=world, aria=False) as env:
        await env.start(SITES.get(task.site).url, task=task.prompt)
        try:
            await run_oracle(env, task)
        except Exception as e:
            raise AssertionError(f"oracle of {task.id} failed at {env.page.url}: {e}") from e
        errors = [s.error for s in env.trajectory.steps if s.error]
        assert not errors, (task.id, errors)
        state = await site_state(task.site, world) if task.kind == "action" else None
        verdict = verify(task, env.trajectory.answer, state)
        return task.id, verdict.passed, verdict.explanation


@pytest.mark.slow
def test_every_task_is_solved_by_its_oracle_and_fails_when_nothing_is_done(run: LoopRunner) -> None:
    async def main() -> None:
        gate = asyncio.Semaphore(3)  # three episodes at a time: the browser's sweet spot on 2 cores
        results = await asyncio.gather(*(_solve(t, gate) for t in TASKS))
        assert [r for r in results if not r[1]] == []
        # Doing nothing: no answer, and a fresh world's state (what an idle episode leaves) fails every check.
        for task in TASKS:
            state = await site_state(task.site, f"idle-{task.id}") if task.kind == "action" else None
            assert not verify(task, None, state).passed, task.id

    run(main())
