"""`OnlineMind2Web`: `forge-eval run online_mind2web` (300 live-web tasks, judged by WebJudge)."""

from __future__ import annotations

from inspect_ai import Task, task
from inspect_ai.dataset import Sample

from forge_eval.benchmarks._benchmark import OfficialSettings
from forge_eval.benchmarks.online_mind2web._data import load_tasks, to_sample
from forge_eval.benchmarks.web._live import (
    DEFAULT_MAX_STEPS,
    DEFAULT_TIME_LIMIT,
    LiveWebBenchmark,
    live_web_task,
    narrow,
    pick,
)
from forge_eval.benchmarks.web.judges import JUDGE_ROLE, webjudge

OFFICIAL_JUDGE = "openai/o4-mini"


def select(version: str, task_ids: str | None, level: str | None, data_dir: str | None) -> list[Sample]:
    """The samples of one version, narrowed to a level (easy, medium, hard) and/or listed task ids."""
    tasks = narrow(load_tasks(version, data_dir), lambda t: t.level, level, "Online-Mind2Web level")
    return [to_sample(t, version) for t in pick(tasks, task_ids, "Online-Mind2Web")]


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
) -> Task:
    """Online-Mind2Web on the live web, judged by WebJudge (role "judge").

    seed, harness, max_steps, time_limit, observation, max_tokens and local_clones: see `live_web_task`.

    Args:
        version: "2025-11" (with the 2025-11-03 replacements) or "2025-06" (the original 300).
        task_ids: Comma-separated task ids; level: easy, medium or hard only.
        judge_text: Judge from ARIA + OCR text instead of screenshots (not comparable).
        data_dir: A copy of the upstream data (default: the cache, else the pinned upstream download).
    """
    return live_web_task(
        name="online_mind2web",
        samples=select(version, task_ids, level, data_dir),
        judge=webjudge(text=judge_text),
        seed=seed,
        harness=harness,
        max_steps=max_steps,
        time_limit=time_limit,
        observation=observation,
        max_tokens=max_tokens,
        local_clones=local_clones,
        metadata={"benchmark": "online_mind2web", "version": version},
    )


class OnlineMind2Web(LiveWebBenchmark):
    name = "online_mind2web"
    description = "Online-Mind2Web: 300 live-web tasks on 136 sites, judged by WebJudge"
    official = OfficialSettings(
        trials=3,
        pass_threshold=1.0,
        time_limit=DEFAULT_TIME_LIMIT,
        judge_role=JUDGE_ROLE,
        judge_model=OFFICIAL_JUDGE,
        paper_scores={"success_rate": 0.630},
        paper_source="OpenForgeRL (arXiv 2607.21557): Online-Mind2Web, 300 tasks, after RL",
    )
    judge_kind = "webjudge"
    protocol_pending = (
        "protocol record not yet filled: WebJudge's prompts and inputs are ours, and the MolmoWeb "
        "harness's prompt and sampling are ours"
    )
    default_version = "2025-11"
    task_function = online_mind2web
    select = select
