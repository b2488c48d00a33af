"""The Online-Mind2Web Inspect task: one live-web browser episode per sample, judged by WebJudge."""

from __future__ import annotations

from inspect_ai import Task, task

from forge_eval.benchmarks.online_mind2web._data import select_tasks
from forge_eval.benchmarks.online_mind2web._scorer import online_mind2web_scorer
from forge_eval.benchmarks.web import DEFAULT_MAX_STEPS, DEFAULT_TIME_LIMIT, live_web_task


@task
def online_mind2web(
    seed: int = 0,
    harness: str = "molmoweb",
    version: str = "2025-11",
    task_ids: str | None = None,
    level: str | None = None,
    max_steps: int = DEFAULT_MAX_STEPS,
    time_limit: int = DEFAULT_TIME_LIMIT,
    observation: str = "auto",
    judge_text: bool = False,
    max_tokens: int = 1024,
    local_clones: bool = False,
    data_dir: str | None = None,
    upstream_dir: str | None = None,
) -> Task:
    """Online-Mind2Web on the live web, judged by WebJudge (role "judge").

    seed, harness, max_steps, time_limit, observation, max_tokens and local_clones: see `live_web_task`.

    Args:
        version: "2025-11" (with the 2025-11-03 replacements) or "2025-06" (the original 300).
        task_ids: Comma-separated task ids; level: easy, medium or hard only.
        judge_text: Judge from ARIA + OCR text instead of screenshots (not comparable).
        data_dir: A copy of the upstream data (default: the cache, else the pinned upstream download).
        upstream_dir: A clone of an upstream repository at its pinned commit (the judge's, MolmoWeb's
            agent), or a folder of such trees named `owner+name@commit` (default: the cache, else
            downloaded).
    """
    return live_web_task(
        name="online_mind2web",
        samples=select_tasks(data_dir, version, task_ids, level).samples,
        judge=online_mind2web_scorer(judge_text, upstream_dir),
        seed=seed,
        harness=harness,
        max_steps=max_steps,
        time_limit=time_limit,
        observation=observation,
        max_tokens=max_tokens,
        local_clones=local_clones,
        upstream_dir=upstream_dir,
        metadata={"benchmark": "online_mind2web", "version": version},
    )
