"""The WebVoyager Inspect task: one live-web browser episode per sample, judged by WebVoyager's judge."""

from __future__ import annotations

from inspect_ai import Task, task

from forge_eval.benchmarks.web import LiveOptions, live_web_options, live_web_task
from forge_eval.benchmarks.weblab import clone_host_map
from forge_eval.benchmarks.webvoyager._data import DEFAULT_VERSION, select_tasks
from forge_eval.benchmarks.webvoyager._scorer import webvoyager_scorer


@task
@live_web_options
def webvoyager(version: str = DEFAULT_VERSION, site: str | None = None, *, options: LiveOptions) -> Task:
    """WebVoyager (Fara-595) on the live web, judged by WebVoyager's LLM judge (role "judge").

    Args:
        options: Every `LiveOptions` field, each an option of its own (`-T max_steps=10`).
        version: "fara" (Fara-595) or "molmoweb" (the same ids, 82 re-dated to 2026).
        site: Only this site's tasks (e.g. "Allrecipes").
    """
    chosen = select_tasks(options.data_dir, version, options.task_ids, site)
    return live_web_task("webvoyager", chosen, webvoyager_scorer, options, clone_host_map, version)
