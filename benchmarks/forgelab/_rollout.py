"""A forgelab task for a training rollout of a real harness: its world, tools, prompt and verifier.

The same world setup (`create_world`) and checks (`grade_world`) as an eval sample; the tools find the
world in a sample store of the rollout's own, as they do in Inspect.
"""

from __future__ import annotations

import contextvars
from typing import Any

from inspect_ai.util._store import Store, init_subtask_store

from forge_eval._errors import UsageError
from forge_eval.benchmarks.forgelab._data import select_tasks
from forge_eval.benchmarks.forgelab._scorer import grade_world
from forge_eval.benchmarks.forgelab._task import SYSTEM_PROMPT, create_world
from forge_eval.benchmarks.services import bind_world, tools_for
from forge_eval.harnesses import TaskEnvironment
from forge_eval.sandbox import Verdict


async def rollout_environment(task: dict[str, Any]) -> TaskEnvironment:
    """The environment of forgelab task `task["task_id"]` (from `task["data_dir"]`, default the packaged
    data): a fresh world in its initial state, its services' tools, and its checks as the verifier."""
    task_id = task.get("task_id")
    if not task_id:
        raise UsageError(f"forgelab training task has no task_id: {task!r}", hint="export it with task_rows")
    [sample] = select_tasks(task.get("data_dir"), task_ids=str(task_id)).samples
    metadata: dict[str, Any] = sample.metadata or {}
    client = await create_world(str(task_id), metadata)
    context = contextvars.copy_context()
    context.run(init_subtask_store, Store())
    context.run(bind_world, client.world, client.urls)

    async def grade(answer: str) -> Verdict:
        score = await grade_world(client, answer, metadata)
        output = {"explanation": score.explanation, **(score.metadata or {})}
        return Verdict(reward=score.as_float(), verifier_output=output, answer=answer)

    return TaskEnvironment(
        prompt=str(sample.input),
        system_prompt=SYSTEM_PROMPT,
        tools=tools_for(metadata["services"]),
        context=context,
        grade=grade,
        close=client.drop,
    )
