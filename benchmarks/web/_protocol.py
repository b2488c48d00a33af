"""The protocol record of the live-web benchmarks (WebVoyager, Online-Mind2Web): which elements are
upstream's, read from the pinned trees at run time, and which are ours.

Official: the MolmoWeb harness as MolmoWeb's own agent run as its benchmark runner runs it (its prompt
template, its sampling, the runner's history length, step cap, step accounting and ending), the
benchmark's judge as upstream's code (prompt, messages, verdict rule), the official judge model, the
task file of the chosen version, the live web with any Chromium. A run is comparable when it used all
of them; the text variants (agent or judge), another harness, another judge model, local clones instead
of the live web, or a subset of the tasks each make it not comparable, and the record says which.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from forge_eval._errors import ForgeError
from forge_eval.benchmarks._acquire import DataSource
from forge_eval.benchmarks._benchmark import RunUsed, task_set
from forge_eval.benchmarks._selection import Selection
from forge_eval.benchmarks.web._config import browser_build
from forge_eval.benchmarks.web._upstream import MOLMOWEB_TREE, locate_tree, locate_version
from forge_eval.benchmarks.web.judges import judge_source
from forge_eval.harnesses import HARNESSES
from forge_eval.harnesses.molmoweb import (
    AGENT_FILE,
    EPISODE_FILE,
    EXIT_TAG,
    RUNNER_FILE,
    loop_settings,
    runner_settings,
    upstream_agent,
)
from forge_eval.rundir import (
    NotRecorded,
    NotUsed,
    Ours,
    ProtocolElement,
    ProtocolRecord,
    Unpinned,
    Upstream,
    Value,
    element,
)

OFFICIAL_HARNESS = "molmoweb"
#: What MolmoWeb's runner episode (`Episode.run_episode` of `EPISODE_FILE`, whose hash the record keeps)
#: does at the pinned commit: one step per `predict_action`, ended by `[EXIT]`, `max_steps`, or a
#: prediction error (a missing reply).
RUNNER_EPISODE = {
    "step": "one per agent action",
    "ends": f"a message starting with {EXIT_TAG}, the step cap, or no reply",
}


@dataclass(frozen=True)
class LiveProtocol:
    """What differs between the two live-web benchmarks' records.

    Attributes:
        judge: The judge's name (`judge_source`).
        official_judge: The official judge model.
        sources: The task data of each version.
        default_version: The version a run uses unless told otherwise.
        default_max_steps: The harness's step cap (MolmoWeb's default).
        select: The benchmark's selection function (all tasks of a version: the official task set).
    """

    judge: str
    official_judge: str
    sources: dict[str, DataSource]
    default_version: str
    default_max_steps: int
    select: Any

    def record(self, run: RunUsed) -> ProtocolRecord:
        args = run.task_args
        version = str(args.get("version") or self.default_version)
        upstream_dir = args.get("upstream_dir")
        return ProtocolRecord(
            elements=[
                self._task_set(run, version),
                self._harness(run, upstream_dir),
                *self._agent(run, upstream_dir),
                element(
                    "judge_model",
                    Value(value=self.official_judge),
                    Value(value=run.judge_model),
                ),
                *self._judge(run, upstream_dir),
                element("user_model", NotUsed(why="single-turn tasks: no simulated user")),
                self._environment(run),
                element(
                    "environment",
                    Unpinned(what="any Chromium that Playwright drives"),
                    Value(value=browser_build()),
                    name="environment: browser build",
                ),
                self._data(run, version),
            ]
        )

    def _task_set(self, run: RunUsed, version: str) -> ProtocolElement:
        try:
            every: Selection = self.select(data_dir=run.data_dir, version=version)
            official: Any = task_set((s.id for s in every.samples), f"all of version {version}")
        except ForgeError as e:
            official = NotRecorded(why=f"the task file could not be read: {e}")
        return run.task_set_element(official)

    def _harness(self, run: RunUsed, upstream_dir: str | None) -> ProtocolElement:
        """MolmoWeb's runner (its `run` defaults and its episode) against the loop this run used."""
        tree = locate_tree(MOLMOWEB_TREE, upstream_dir)
        settings = runner_settings(tree)
        runner = {k: settings[k] for k in ("max_steps", "max_past_steps", "max_past_images")}
        name = {"name": OFFICIAL_HARNESS, "version": HARNESSES.get(OFFICIAL_HARNESS).version}
        where = {"repo": MOLMOWEB_TREE.repo, "commit": MOLMOWEB_TREE.revision}
        official = Upstream.file(
            tree,
            **where,
            path=RUNNER_FILE,
            symbol=f"run's defaults; {EPISODE_FILE}: Episode.run_episode",
            value={**name, **runner, **RUNNER_EPISODE},
        )
        max_steps = run.task_args.get("max_steps", self.default_max_steps)
        if run.harness == OFFICIAL_HARNESS and run.task_args.get("observation", "auto") != "text":
            ours: Any = Value(value={**name, **loop_settings(upstream_agent(tree), max_steps)})
        else:
            ours = _harness(run.harness, max_steps)
        episode = Upstream.file(tree, **where, path=EPISODE_FILE, symbol="Episode.run_episode")
        return element("harness", official, ours, note=f"runner episode sha256 {episode.sha256[:12]}")

    def _agent(self, run: RunUsed, upstream_dir: str | None) -> list[ProtocolElement]:
        tree = locate_tree(MOLMOWEB_TREE, upstream_dir)
        agent = upstream_agent(tree)
        sampling = {"temperature": agent.sampling_temperature, "top_p": agent.sampling_top_p}
        source = {"repo": MOLMOWEB_TREE.repo, "commit": MOLMOWEB_TREE.revision, "path": AGENT_FILE}
        prompt = Upstream.file(tree, **source, symbol="MultimodalAgent.get_user_message, molmo_web_think")
        official_sampling = Upstream.file(tree, **source, symbol="MultimodalAgent", value=sampling)
        observation = run.task_args.get("observation", "auto")
        if run.harness != OFFICIAL_HARNESS:
            ours_prompt: Any = Ours(what=f"the {run.harness} harness with the browser tools and our prompt")
            ours_sampling: Any = Value(value=dict(run.sampling))
        elif observation == "text":
            ours_prompt = Ours(what="the molmoweb harness's text variant (element list + ARIA, our prompt)")
            ours_sampling = Value(value=dict(run.sampling))
        else:
            ours_prompt, ours_sampling = prompt, official_sampling
        note = (
            "observation auto: a text-only model gets our text variant instead (each sample's metadata "
            "`prompt` says which)"
            if run.harness == OFFICIAL_HARNESS and observation == "auto"
            else None
        )
        return [
            element("agent_prompt", prompt, ours_prompt, note=note),
            element("agent_sampling", official_sampling, ours_sampling),
        ]

    def _judge(self, run: RunUsed, upstream_dir: str | None) -> list[ProtocolElement]:
        source = judge_source(self.judge, upstream_dir)
        where = {"repo": source["repo"], "commit": source["commit"], "path": source["path"]}
        prompt = Upstream(**where, sha256=source["sha256"], symbol=source["symbol"])
        grader = Upstream(**where, sha256=source["sha256"], symbol=f"{source['symbol']}: its verdict rule")
        if run.task_args.get("judge_text"):
            ours: Any = Ours(what=f"the {self.judge} judge's text variant (ARIA + OCR instead of images)")
        else:
            ours = prompt
        return [element("judge_prompt", prompt, ours), element("grader", grader)]

    def _environment(self, run: RunUsed) -> ProtocolElement:
        live = Unpinned(what="the live web at run time")
        if run.task_args.get("local_clones"):
            clones = NotUsed(why="weblab's local clones instead of the live web")
            return element("environment", live, clones, name="environment: web")
        return element("environment", live, Value(value="the live web"), name="environment: web")

    def _data(self, run: RunUsed, version: str) -> ProtocolElement:
        source, folder = locate_version(self.sources, version, run.data_dir, "task data")
        official = Upstream.file(folder, repo=source.repo, commit=source.revision, path=source.marker)
        return element("data", official)


def _harness(name: str, max_steps: Any) -> Value:
    value = {"name": name, "version": HARNESSES.get(name).version, "max_steps": max_steps}
    return Value(value=value, label=f"{name} ({value['version']}), {max_steps} steps")
