"""`WebVoyager`: `forge-eval run webvoyager` (Fara-595 with the MolmoWeb harness; live web only)."""

from __future__ import annotations

from inspect_ai import Task, task
from inspect_ai.dataset import Sample

from forge_eval.benchmarks._benchmark import OfficialSettings
from forge_eval.benchmarks.web._live import (
    DEFAULT_MAX_STEPS,
    DEFAULT_TIME_LIMIT,
    LiveWebBenchmark,
    live_web_task,
    narrow,
    pick,
)
from forge_eval.benchmarks.web.judges import JUDGE_ROLE, webvoyager_judge
from forge_eval.benchmarks.webvoyager._data import load_tasks, to_sample

OFFICIAL_JUDGE = "openai/gpt-4o"


def select(version: str, task_ids: str | None, site: str | None, data_dir: str | None) -> list[Sample]:
    """The samples of one version, narrowed to a site (e.g. "Allrecipes") and/or listed task ids."""
    tasks = narrow(load_tasks(version, data_dir), lambda t: t.site, site, "WebVoyager site")
    return [to_sample(t, version) for t in pick(tasks, task_ids, "WebVoyager")]


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
) -> Task:
    """WebVoyager (Fara-595) on the live web, judged by WebVoyager's LLM judge (role "judge").

    seed, harness, max_steps, time_limit, observation, max_tokens and local_clones: see `live_web_task`.

    Args:
        version: "fara" (Fara-595) or "molmoweb" (the same ids, 82 re-dated to 2026).
        task_ids: Comma-separated task ids; site: only this site's tasks (e.g. "Allrecipes").
        judge_text: Judge from ARIA + OCR text instead of screenshots (not comparable).
        data_dir: A copy of the upstream data (default: the cache, else the pinned upstream download).
    """
    return live_web_task(
        name="webvoyager",
        samples=select(version, task_ids, site, data_dir),
        judge=webvoyager_judge(text=judge_text),
        seed=seed,
        harness=harness,
        max_steps=max_steps,
        time_limit=time_limit,
        observation=observation,
        max_tokens=max_tokens,
        local_clones=local_clones,
        metadata={"benchmark": "webvoyager", "version": version},
    )


class WebVoyager(LiveWebBenchmark):
    name = "webvoyager"
    description = "WebVoyager (Fara-595): 595 live-web tasks on 15 sites, MolmoWeb harness, LLM judge"
    official = OfficialSettings(
        trials=1,
        pass_threshold=1.0,
        time_limit=DEFAULT_TIME_LIMIT,
        judge_role=JUDGE_ROLE,
        judge_model=OFFICIAL_JUDGE,
        paper_scores={"success_rate": 0.723},
        paper_source="OpenForgeRL (arXiv 2607.21557): WebVoyager Fara-595, MolmoWeb harness, after RL",
    )
    judge_kind = "webvoyager"
    protocol_pending = (
        "protocol record not yet filled: the judge prompt is our rewrite of WebVoyager's, and the "
        "MolmoWeb harness's prompt and sampling are ours"
    )
    default_version = "fara"
    task_function = webvoyager
    select = select
