"""weblab's verifier (ground truth): the answer of an information task, the server state of an action task."""

from __future__ import annotations

from typing import Any

import httpx
from inspect_ai.scorer import Score, Scorer, Target, accuracy, scorer, stderr
from inspect_ai.solver import TaskState

from forge_eval.benchmarks.services import WORLD_HEADER
from forge_eval.benchmarks.web import current_env
from forge_eval.benchmarks.weblab._checks import verify
from forge_eval.benchmarks.weblab._data import task_of
from forge_eval.benchmarks.weblab._sites import sites


async def site_state(site: str, world: str) -> dict[str, Any]:
    """The site's `/__state` for one world (what action tasks are checked against)."""
    url = sites().url(site) + "/__state"
    async with httpx.AsyncClient(timeout=10) as client:
        response = await client.get(url, headers={WORLD_HEADER: world})
        response.raise_for_status()
        return response.json()


@scorer(metrics=[accuracy(), stderr()])
def weblab_verifier() -> Scorer:
    """Ground truth: the answer (information tasks) or the site's server state (action tasks)."""

    async def score(state: TaskState, target: Target) -> Score:
        env = current_env()
        t = task_of(state.sample_id)
        world_state = await site_state(t.site, env.world or "") if t.kind == "action" else None
        verdict = verify(t, env.trajectory.answer, world_state)
        return Score(
            value=1.0 if verdict.passed else 0.0,
            answer=env.trajectory.final_response,
            explanation=verdict.explanation,
            metadata={"steps": len(env.trajectory.steps), "kind": t.kind},
        )

    return score
