"""The WebVoyager Inspect task: one live-web browser episode per sample, judged by WebVoyager's judge."""

from __future__ import annotations

from inspect_ai import Task, task

from forge_eval.benchmarks.web import DEFAULT_MAX_STEPS, DEFAULT_TIME_LIMIT, live_web_task
from forge_eval.benchmarks.webvoyager._data import select_tasks
from forge_eval.benchmarks.webvoyager._scorer import webvoyager_scorer


@task
def webvoyager(
    seed: int = 0,
    harness: str = "molmoweb",
    version: str = "fara",
    task_ids: str | None = None,
    site: str | None = None,
    max_steps: int = DEFAULT_MAX_STEPS,
    time_limit: int = DEFAULT_TIME_LIMIT,
    observation: str = "auto",
    judge_text: bool = False,
    max_tokens: int = 1024,
    local_clones: bool = False,
    data_dir: str | None = None,
    upstream_dir: str | None = None,
) -> Task:
    """WebVoyager (Fara-595) on the live web, judged by WebVoyager's LLM judge (role "judge").

    seed, harness, max_steps, time_limit, observation, max_tokens and local_clones: see `live_web_task`.

    Args:
        version: "fara" (Fara-595) or "molmoweb" (the same ids, 82 re-dated to 2026).
        task_ids: Comma-separated task ids; site: only this site's tasks (e.g. "Allrecipes").
        judge_text: Judge from ARIA + OCR text instead of screenshots (not comparable).
        data_dir: A copy of the upstream data (default: the cache, else the pinned upstream download).
        upstream_dir: A clone of an upstream repository at its pinned commit (the judge's, MolmoWeb's
            agent), or a folder of such trees named `owner+name@commit` (default: the cache, else
            downloaded).
    """
    return live_web_task(
        name="webvoyager",
        samples=select_tasks(data_dir, version, task_ids, site).samples,
        judge=webvoyager_scorer(judge_text, upstream_dir),
        seed=seed,
        harness=harness,
        max_steps=max_steps,
        time_limit=time_limit,
        observation=observation,
        max_tokens=max_tokens,
        local_clones=local_clones,
        upstream_dir=upstream_dir,
        metadata={"benchmark": "webvoyager", "version": version},
    )
