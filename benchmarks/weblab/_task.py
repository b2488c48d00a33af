"""The weblab Inspect task: local sites, one browser episode per sample, the verifier (and judges)."""

from __future__ import annotations

from typing import Any

import anyio
import httpx
from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.scorer import Score, Scorer, Target, accuracy, scorer, stderr
from inspect_ai.solver import Generate, Solver, TaskState, solver

from forge_eval._errors import UnknownNameError, UsageError
from forge_eval.benchmarks.services import WORLD_HEADER, ServiceCluster
from forge_eval.benchmarks.web import BrowserConfig, close_episode, current_env, open_episode, web_agent
from forge_eval.benchmarks.weblab._checks import verify
from forge_eval.benchmarks.weblab._sites import SITES
from forge_eval.benchmarks.weblab._tasks import TASKS, WebTask
from forge_eval.harnesses import HARNESSES

#: Step cap per episode: weblab tasks need 2-16 actions (the oracle's count); MolmoWeb's default is 30.
DEFAULT_MAX_STEPS = 20
DEFAULT_TIME_LIMIT = 900
DEFAULT_MAX_TOKENS = 512

SYSTEM_PROMPT = """\
You operate a web browser (1280x720) with the browser_* tools to complete the user's task on the site that \
is open. Click fields before typing. When done, call browser_send_msg_to_user with your answer."""

BY_ID = {t.id: t for t in TASKS}
QUICK_SUBSET = ("dict-pos", "wiki-capital", "recipes-calories", "news-latest-business")


def sites() -> ServiceCluster:
    """The process-wide weblab sites (started on first use)."""
    return ServiceCluster.shared(catalog=SITES)  # type: ignore[arg-type]  # sites serve like services


def host_map(cluster: ServiceCluster) -> dict[str, str]:
    """Each site's public hostname -> its local server, for the browser's request routing."""
    return {site.host: cluster.url(name) for name, site in SITES.items()}


def task_of(sample_id: str | int | None) -> WebTask:
    """The weblab task of a sample id (`<task id>` or `<task id>@<variant>`)."""
    return BY_ID[str(sample_id).split("@")[0]]


def clone_map(cluster: ServiceCluster) -> dict[str, str]:
    """Real hostnames weblab clones -> their local site (for live-web benchmarks run offline)."""
    return {host: cluster.url(name) for name, site in SITES.items() for host in site.clones}


def to_sample(t: WebTask) -> Sample:
    site = SITES.get(t.site)
    return Sample(
        id=t.id,
        input=t.prompt,
        target=list(t.answer) or t.state_doc,
        metadata={
            "site": t.site,
            "kind": t.kind,
            "difficulty": t.difficulty,
            "category": t.site,
            "start_url": site.url,
            "task": f"On {site.title} ({site.url}): {t.prompt}",
            "oracle_steps": len(t.oracle),
        },
    )


def select_samples(subset: str = "all", task_ids: str | None = None) -> list[Sample]:
    """The samples of "all", "quick", a site, a kind (info/action), a difficulty, or listed ids."""
    if task_ids:
        wanted = [i.strip() for i in task_ids.split(",") if i.strip()]
        for task_id in wanted:
            if task_id not in BY_ID:
                raise UnknownNameError("weblab task", task_id, list(BY_ID))
        return [to_sample(BY_ID[i]) for i in wanted]
    if subset == "all":
        return [to_sample(t) for t in TASKS]
    if subset == "quick":
        return [to_sample(BY_ID[i]) for i in QUICK_SUBSET]
    groups = {g for t in TASKS for g in (t.site, t.kind, t.difficulty)}
    if subset not in groups:
        raise UsageError(
            f"unknown weblab subset '{subset}'", hint=f"use all, quick, or one of: {sorted(groups)}"
        )
    return [to_sample(t) for t in TASKS if subset in (t.site, t.kind, t.difficulty)]


@solver
def weblab_setup(max_steps: int = DEFAULT_MAX_STEPS) -> Solver:
    """Start the sites (once per process) and open the sample's browser episode at its site."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        cluster = await anyio.to_thread.run_sync(sites)
        await open_episode(state, BrowserConfig(host_map=host_map(cluster)), max_steps)
        return state

    return solve


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
    """
    from inspect_ai.model import GenerateConfig

    from forge_eval.benchmarks.web.judges import judge_scorers

    samples = select_samples(subset, task_ids)
    HARNESSES.get(harness)  # unknown names fail here, before any sample runs
    return Task(
        dataset=MemoryDataset(samples, name="weblab"),
        setup=weblab_setup(max_steps),
        solver=web_agent(harness, SYSTEM_PROMPT, observation),
        scorer=[weblab_verifier(), *judge_scorers(judges)],
        cleanup=close_episode,
        config=GenerateConfig(seed=seed, max_tokens=max_tokens),
        time_limit=time_limit,
        name="weblab",
        metadata={"benchmark": "weblab", "seed": seed, "harness": harness},
    )
