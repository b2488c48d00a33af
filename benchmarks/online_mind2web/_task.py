"""The Online-Mind2Web Inspect task: one live-web browser episode per sample, judged by WebJudge."""

from __future__ import annotations

from inspect_ai import Task, task

from forge_eval.benchmarks.online_mind2web._data import DEFAULT_VERSION, select_tasks
from forge_eval.benchmarks.online_mind2web._scorer import online_mind2web_scorer
from forge_eval.benchmarks.web import LiveOptions, live_web_options, live_web_task
from forge_eval.benchmarks.weblab import clone_host_map


@task
@live_web_options
def online_mind2web(
    version: str = DEFAULT_VERSION, level: str | None = None, *, options: LiveOptions
) -> Task:
    """Online-Mind2Web on the live web, judged by WebJudge (role "judge").

    Args:
        options: Every `LiveOptions` field, each an option of its own (`-T max_steps=10`).
        version: "2025-11" (with the 2025-11-03 replacements) or "2025-06" (the original 300).
        level: Only this level's tasks: easy, medium or hard.
    """
    chosen = select_tasks(options.data_dir, version, options.task_ids, level)
    return live_web_task("online_mind2web", chosen, online_mind2web_scorer, options, clone_host_map, version)
