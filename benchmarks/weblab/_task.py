"""The weblab Inspect task: local sites, one browser episode per sample, the verifier (and judges)."""

from __future__ import annotations

import anyio
from inspect_ai import Task, task
from inspect_ai.model import GenerateConfig
from inspect_ai.solver import Generate, Solver, TaskState, solver

from forge_eval.benchmarks._task import benchmark_task
from forge_eval.benchmarks.web import BrowserConfig, close_episode, open_episode, web_agent
from forge_eval.benchmarks.web.judges import judge_scorers
from forge_eval.benchmarks.weblab._data import select_tasks
from forge_eval.benchmarks.weblab._scorer import weblab_verifier
from forge_eval.benchmarks.weblab._sites import host_map, sites

#: Step cap per episode: weblab tasks need 2-16 actions (the oracle's count); MolmoWeb's default is 30.
DEFAULT_MAX_STEPS = 20
DEFAULT_TIME_LIMIT = 900
DEFAULT_MAX_TOKENS = 512

SYSTEM_PROMPT = """\
You operate a web browser (1280x720) with the browser_* tools to complete the user's task on the site that \
is open. Click fields before typing. When done, call browser_send_msg_to_user with your answer."""


@solver
def weblab_setup(max_steps: int = DEFAULT_MAX_STEPS) -> Solver:
    """Start the sites (once per process) and open the sample's browser episode at its site."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        cluster = await anyio.to_thread.run_sync(sites)
        await open_episode(state, BrowserConfig(host_map=host_map(cluster)), max_steps)
        return state

    return solve


@task
def weblab(
    seed: int = 0,
    harness: str = "molmoweb",
    subset: str = "all",
    task_ids: str | None = None,
    max_steps: int = DEFAULT_MAX_STEPS,
    time_limit: int = DEFAULT_TIME_LIMIT,
    observation: str = "auto",
    judges: str = "",
    max_tokens: int = DEFAULT_MAX_TOKENS,
    upstream_dir: str | None = None,
) -> Task:
    """weblab: offline web tasks on six local sites, checked against ground truth.

    Args:
        seed: Sampling seed passed to the model.
        harness: "molmoweb" (the JSON-action loop) or a tool-calling harness (react) with browser tools.
        subset: "all", "quick", a site, "info"/"action", or a difficulty.
        task_ids: Comma-separated task ids (overrides `subset`).
        max_steps: Browser actions per episode.
        time_limit: Seconds per sample.
        observation: molmoweb's observation: auto, screenshot or text.
        judges: Comma-separated LLM judges to run beside the verifier ("webvoyager", "webjudge",
            "webvoyager-text", "webjudge-text"), for the judge-vs-verifier agreement study.
        max_tokens: Most tokens per model reply.
        upstream_dir: Where the pinned upstream trees of the judges and of MolmoWeb's agent are (a
            folder of `owner+name@commit` trees; default: the cache, else downloaded).
    """
    return benchmark_task(
        "weblab",
        select_tasks(subset=subset, task_ids=task_ids),
        seed=seed,
        harness=harness,
        agent=lambda chosen: web_agent(chosen.name, SYSTEM_PROMPT, observation, upstream_dir),
        scorer=[weblab_verifier(), *judge_scorers(judges, upstream_dir)],
        setup=weblab_setup(max_steps),
        cleanup=close_episode,
        config=GenerateConfig(max_tokens=max_tokens),
        time_limit=time_limit,
    )
