"""Live-web benchmarks (WebVoyager, Online-Mind2Web): their one base class, the online check, task
selection and the shared Inspect task.

Without internet these benchmarks run against nothing, so a run offline is refused with exit 2. For
tests and demos, `local_clones=True` maps the real hostnames that weblab clones (Allrecipes, Amazon,
Cambridge Dictionary, ...) onto the local weblab sites; such runs are marked `live_web: false` and are
not comparable with published numbers.
"""

from __future__ import annotations

import socket
from typing import Any, ClassVar, TypeVar
from urllib.parse import urlsplit

import anyio
from inspect_ai import Task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import GenerateConfig
from inspect_ai.scorer import Scorer
from inspect_ai.solver import Generate, Solver, TaskState, solver

from forge_eval._errors import UsageError
from forge_eval.benchmarks._benchmark import Benchmark, RunUsed
from forge_eval.benchmarks.web._agent import web_agent
from forge_eval.benchmarks.web._config import BrowserConfig, browser_requirements
from forge_eval.benchmarks.web._episode import close_episode, open_episode
from forge_eval.benchmarks.web._protocol import LiveProtocol
from forge_eval.benchmarks.web.judges import judge_info
from forge_eval.harnesses import HARNESSES
from forge_eval.rundir import ProtocolRecord

T = TypeVar("T")

#: MolmoWeb's `--max_steps` default: the harness the paper ran both benchmarks with (Fara's runs use 100;
#: neither benchmark has an official cap of its own).
DEFAULT_MAX_STEPS = 30
#: MolmoWeb's time budget per trajectory, in seconds.
DEFAULT_TIME_LIMIT = 1800

#: Hosts probed to decide whether the live web is reachable (any one answering is enough).
PROBE_HOSTS = (("www.google.com", 443), ("www.wikipedia.org", 443))
PROBE_TIMEOUT_S = 3.0

LIVE_SYSTEM_PROMPT = """\
You operate a web browser (1280x720) with the browser_* tools to complete the user's task on the live web. \
When done, call browser_send_msg_to_user with your answer."""


class LiveWebUnavailableError(UsageError):
    """A live-web benchmark was asked to run on a machine that cannot reach the web."""


def live_web_available() -> bool:
    for host, port in PROBE_HOSTS:
        try:
            with socket.create_connection((host, port), timeout=PROBE_TIMEOUT_S):
                return True
        except OSError:
            continue
    return False


def require_live_web(benchmark: str) -> None:
    """Refuse (exit 2) when the web is unreachable: the benchmark's sites are the live ones."""
    if not live_web_available():
        raise LiveWebUnavailableError(
            f"{benchmark} runs on the live web, and this machine cannot reach it "
            f"(no connection to {', '.join(h for h, _ in PROBE_HOSTS)} within {PROBE_TIMEOUT_S:.0f} s)",
            hint="run it on a machine with internet access; offline, `forge-eval run weblab` is the local "
            f"web benchmark (and `-T local_clones=true` runs {benchmark}'s plumbing on weblab's clones)",
        )


def clone_host_map() -> dict[str, str]:
    """Real hostname -> local weblab site, for the sites weblab clones."""
    from forge_eval.benchmarks.weblab import clone_map, sites

    return clone_map(sites())


def on_cloned_site(sample: Sample, clones: dict[str, str]) -> bool:
    return (urlsplit(sample.metadata["site_url"]).hostname or "") in clones if sample.metadata else False


@solver
def live_setup(max_steps: int, local_clones: bool) -> Solver:
    """Open the sample's browser episode on the live web (or on weblab's clones)."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        if local_clones:
            clones = await anyio.to_thread.run_sync(clone_host_map)
            config = BrowserConfig(offline=True, host_map=clones)
        else:
            config = BrowserConfig(offline=False)
        state.metadata["live_web"] = not local_clones
        await open_episode(state, config, max_steps)
        return state

    return solve


def live_web_task(
    *,
    name: str,
    samples: list[Sample],
    judge: Scorer,
    seed: int,
    harness: str,
    max_steps: int,
    time_limit: int,
    observation: str,
    max_tokens: int,
    local_clones: bool,
    metadata: dict[str, Any],
    upstream_dir: str | None = None,
) -> Task:
    """The Inspect task of a live-web benchmark: one browser episode per sample, scored by its judge.

    The options both benchmarks' `@task` functions take and pass on:
        seed: Sampling seed passed to the model.
        harness: "molmoweb" (the protocol) or a tool-calling harness with browser tools.
        max_steps: Browser actions per episode.
        time_limit: Seconds per trajectory.
        observation: molmoweb's observation: auto, screenshot or text.
        max_tokens: Most tokens per model reply.
        local_clones: Run only the tasks of sites weblab clones, against those clones (offline plumbing
            check, marked `live_web: false`).
        upstream_dir: Where the pinned upstream trees are (the judge's, MolmoWeb's agent).
    """
    if local_clones:
        clones = clone_host_map()
        samples = [s for s in samples if on_cloned_site(s, clones)]
        if not samples:
            raise UsageError(
                f"none of the selected {name} tasks is on a site weblab clones",
                hint=f"cloned hosts: {', '.join(sorted(clones))}",
            )
    HARNESSES.get(harness)  # unknown names fail here, before any sample runs
    return Task(
        dataset=MemoryDataset(samples, name=name),
        setup=live_setup(max_steps, local_clones),
        solver=web_agent(harness, LIVE_SYSTEM_PROMPT, observation, upstream_dir),
        scorer=judge,
        cleanup=close_episode,
        config=GenerateConfig(seed=seed, max_tokens=max_tokens),
        time_limit=time_limit,
        name=name,
        metadata={**metadata, "seed": seed, "harness": harness, "live_web": not local_clones},
    )


class LiveWebBenchmark(Benchmark):
    """A benchmark on the live web: refused offline, official data from `--data-dir` (else upstream), the
    MolmoWeb harness by default, an LLM judge bound to the model role "judge".

    Subclasses declare their selection and Inspect task functions (`Benchmark`) and their protocol record
    (`live_protocol`, which names their judge as `judge_info` knows it).
    """

    default_harness = "molmoweb"
    accepts_data_dir = True
    #: The benchmark's protocol record: upstream's elements and where this run's came from.
    live_protocol: ClassVar[LiveProtocol]

    def requirements(self) -> list[str]:
        require_live_web(self.name)
        return browser_requirements()

    def judge_info(self, judge_model: str) -> dict[str, Any]:
        return judge_info(self.live_protocol.judge, judge_model, self.official.judge_model)

    def protocol(self, run: RunUsed) -> ProtocolRecord:
        return self.live_protocol.record(run)
