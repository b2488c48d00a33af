"""Live-web benchmarks (WebVoyager, Online-Mind2Web): their one base class, the online check, their
options, samples and Inspect task.

Without internet these benchmarks run against nothing, so a run offline is refused with exit 2. For
tests and demos, `local_clones=True` maps the real hostnames that a local stand-in clones (weblab's
Allrecipes, Amazon, Cambridge Dictionary, ...) onto its sites; such runs are marked `live_web: false` and
are not comparable with published numbers.
"""

from __future__ import annotations

import functools
import inspect
import socket
from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any, ClassVar, get_type_hints
from urllib.parse import urlsplit

import anyio
from inspect_ai import Task
from inspect_ai.dataset import Sample
from inspect_ai.model import GenerateConfig
from inspect_ai.scorer import Scorer
from inspect_ai.solver import Generate, Solver, TaskState, solver

from forge_eval._errors import UsageError
from forge_eval.benchmarks._acquire import DataSource
from forge_eval.benchmarks._benchmark import Benchmark, OfficialSettings, RunUsed
from forge_eval.benchmarks._selection import Selection
from forge_eval.benchmarks._task import benchmark_task
from forge_eval.benchmarks.web._agent import web_agent
from forge_eval.benchmarks.web._config import BrowserConfig, browser_requirements
from forge_eval.benchmarks.web._episode import close_episode, open_episode
from forge_eval.benchmarks.web._protocol import LiveProtocol
from forge_eval.benchmarks.web.judges import JUDGE_ROLE, judge_info
from forge_eval.rundir import ProtocolRecord

#: The harness the paper ran both benchmarks with.
LIVE_HARNESS = "molmoweb"
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


#: Real hostname -> local site, for the sites a local stand-in clones (weblab's `clone_host_map`).
Clones = Callable[[], dict[str, str]]


@dataclass(frozen=True)
class LiveOptions:
    """The options every live-web task takes, besides its version and its own filter.

    `@live_web_options` spells them out in the task function's signature, so Inspect's `-T` and
    `forge-eval run -T` see each one by name.

    Attributes:
        seed: Sampling seed passed to the model.
        harness: "molmoweb" (the protocol) or a tool-calling harness with browser tools.
        task_ids: Comma-separated task ids.
        max_steps: Browser actions per episode.
        time_limit: Seconds per trajectory.
        observation: molmoweb's observation: auto, screenshot or text.
        judge_text: Judge from ARIA + OCR text instead of screenshots (not comparable).
        max_tokens: Most tokens per model reply.
        local_clones: Run the tasks of sites weblab clones against those clones, the others skipped with
            the reason (an offline plumbing check, marked `live_web: false`).
        data_dir: A copy of the upstream data (default: the cache, else the pinned upstream download).
        upstream_dir: A clone of an upstream repository at its pinned commit (the judge's, MolmoWeb's
            agent), or a folder of such trees named `owner+name@commit` (default: the cache, else
            downloaded).
    """

    seed: int = 0
    harness: str = LIVE_HARNESS
    task_ids: str | None = None
    max_steps: int = DEFAULT_MAX_STEPS
    time_limit: int = DEFAULT_TIME_LIMIT
    observation: str = "auto"
    judge_text: bool = False
    max_tokens: int = 1024
    local_clones: bool = False
    data_dir: str | None = None
    upstream_dir: str | None = None


_HINTS = get_type_hints(LiveOptions)
_OPTIONS = [
    inspect.Parameter(f.name, inspect.Parameter.KEYWORD_ONLY, default=f.default, annotation=_HINTS[f.name])
    for f in fields(LiveOptions)
]


def live_web_options(function: Callable[..., Task]) -> Callable[..., Task]:
    """Give a live-web task function, declared as `(own options..., *, options: LiveOptions)`, every
    `LiveOptions` field as a keyword parameter of its own: Inspect reads a task's options (`-T`) and
    records its arguments from the signature, so they are spelled out there, from this one source."""
    own = inspect.signature(function)
    kept = [p for p in own.parameters.values() if p.name != "options"]

    @functools.wraps(function)
    def task_function(*args: Any, **kwargs: Any) -> Task:
        live = {p.name: kwargs.pop(p.name) for p in _OPTIONS if p.name in kwargs}
        return function(*args, options=LiveOptions(**live), **kwargs)

    task_function.__signature__ = own.replace(parameters=[*kept, *_OPTIONS])  # type: ignore[attr-defined]
    return task_function


def _on_cloned_site(sample: Sample, clones: dict[str, str]) -> bool:
    return (urlsplit(sample.metadata["site_url"]).hostname or "") in clones if sample.metadata else False


@solver
def live_setup(max_steps: int, clones: Clones | None) -> Solver:
    """Open the sample's browser episode on the live web (or, given `clones`, on the local clones)."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        if clones is not None:
            config = BrowserConfig(offline=True, host_map=await anyio.to_thread.run_sync(clones))
        else:
            config = BrowserConfig(offline=False)
        state.metadata["live_web"] = clones is None
        await open_episode(state, config, max_steps)
        return state

    return solve


def live_sample(
    task_id: str,
    prompt: str,
    *,
    site_url: str,
    start_url: str,
    category: str,
    version: str,
    target: str = "",
    **metadata: Any,
) -> Sample:
    """A live-web sample: the episode starts at `start_url`; `site_url` is the site the task is about
    (local clones are chosen by its host); `metadata` holds the benchmark's own fields."""
    return Sample(
        id=task_id,
        input=prompt,
        target=target,
        metadata={
            "site_url": site_url,
            "start_url": start_url,
            "task": prompt,
            "category": category,
            "version": version,
            **metadata,
        },
    )


def live_web_task(
    name: str,
    selection: Selection,
    judge: Callable[[bool, str | None], Scorer],
    options: LiveOptions,
    clones: Clones,
    version: str,
) -> Task:
    """The Inspect task of a live-web benchmark: one browser episode per sample, scored by its judge.

    Args:
        name: The benchmark's name.
        selection: The chosen tasks.
        judge: The benchmark's judge as a scorer, given `judge_text` and `upstream_dir`.
        options: The task's live-web options.
        clones: The local clones of real sites (used with `options.local_clones`).
        version: The task data's version (task metadata).
    """
    if options.local_clones:
        hosts = clones()
        away = "its site has no local clone"
        elsewhere = {str(s.id): away for s in selection.samples if not _on_cloned_site(s, hosts)}
        selection = Selection(
            [s for s in selection.samples if str(s.id) not in elsewhere],
            {**selection.skipped, **elsewhere},
            hint=f"with local_clones, choose tasks on the cloned hosts: {', '.join(sorted(hosts))}",
        )
    return benchmark_task(
        name,
        selection,
        seed=options.seed,
        harness=options.harness,
        agent=lambda h: web_agent(h.name, LIVE_SYSTEM_PROMPT, options.observation, options.upstream_dir),
        scorer=judge(options.judge_text, options.upstream_dir),
        setup=live_setup(options.max_steps, clones if options.local_clones else None),
        cleanup=close_episode,
        config=GenerateConfig(max_tokens=options.max_tokens),
        time_limit=options.time_limit,
        metadata={"version": version, "live_web": not options.local_clones},
    )


def live_official(
    *, judge_model: str, trials: int, paper_scores: dict[str, float], paper_source: str
) -> OfficialSettings:
    """A live-web benchmark's official settings: every task must pass, MolmoWeb's time budget, the LLM
    judge in role "judge"; its trials, judge model and paper numbers are its own."""
    return OfficialSettings(
        trials=trials,
        pass_threshold=1.0,
        time_limit=DEFAULT_TIME_LIMIT,
        judge_role=JUDGE_ROLE,
        judge_model=judge_model,
        paper_scores=paper_scores,
        paper_source=paper_source,
    )


class LiveWebBenchmark(Benchmark):
    """A benchmark on the live web: refused offline, official data from `--data-dir` (else upstream), the
    MolmoWeb harness by default, an LLM judge bound to the model role "judge".

    Subclasses declare their selection and Inspect task functions (`Benchmark`), their official settings
    (`live_official`) and what their protocol record is built from: `judge_name`, `sources`,
    `default_version`.
    """

    default_harness = LIVE_HARNESS
    accepts_data_dir = True
    resources = {"browser": 1}
    #: The judge's name as `judge_source` and `judge_info` know it.
    judge_name: ClassVar[str]
    #: The task data of each version.
    sources: ClassVar[dict[str, DataSource]]
    #: The version a run uses unless told otherwise.
    default_version: ClassVar[str]

    @property
    def live_protocol(self) -> LiveProtocol:
        """The protocol record's builder, from the class's declarations."""
        return LiveProtocol(
            judge=self.judge_name,
            official_judge=str(self.official.judge_model),
            sources=self.sources,
            default_version=self.default_version,
            default_max_steps=DEFAULT_MAX_STEPS,
            select=type(self).select_function,
        )

    def requirements(self) -> list[str]:
        require_live_web(self.name)
        return browser_requirements()

    def judge_info(self, judge_model: str) -> dict[str, Any]:
        return judge_info(self.judge_name, judge_model, self.official.judge_model)

    def protocol(self, run: RunUsed) -> ProtocolRecord:
        return self.live_protocol.record(run)
