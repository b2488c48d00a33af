"""weblab's protocol record. weblab is forge-eval's own benchmark, so its official protocol is ours: the
MolmoWeb-style harness and its limits, the packaged tasks, sites and verifiers, any Chromium. A run is
comparable when it used all of them as they are here."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from forge_eval.benchmarks._benchmark import RunUsed, own_elements
from forge_eval.benchmarks.web import ACTIONS, browser_build
from forge_eval.benchmarks.weblab._data import select_tasks
from forge_eval.benchmarks.weblab._task import (
    DEFAULT_MAX_STEPS,
    DEFAULT_MAX_TOKENS,
    DEFAULT_TIME_LIMIT,
    SYSTEM_PROMPT,
)
from forge_eval.harnesses import HARNESSES
from forge_eval.harnesses.molmoweb import system_prompt as molmoweb_prompt
from forge_eval.rundir import NotUsed, Ours, ProtocolRecord, Unpinned, Value, element

_HERE = Path(__file__).parent
OFFICIAL_HARNESS = "molmoweb"


def _harness(name: str, max_steps: Any, time_limit: Any, observation: Any) -> Value:
    value = {
        "name": name,
        "version": HARNESSES.get(name).version,
        "max_steps": max_steps,
        "time_limit": time_limit,
        "observation": observation,
    }
    label = f"{name} ({value['version']}), {max_steps} steps, {time_limit} s, observation {observation}"
    return Value(value=value, label=label)


def _prompt(harness: str) -> Ours:
    """The prompt the model sees: the MolmoWeb loop's (MolmoWeb's own agent for a model that sees
    screenshots, the text variant's prompt, hashed here, for a text-only one), or weblab's for
    tool-calling harnesses."""
    if harness == OFFICIAL_HARNESS:
        prompt = molmoweb_prompt(spec for _, spec in ACTIONS.items())
        return Ours.text("the molmoweb harness (MolmoWeb's agent, or its text variant's prompt)", prompt)
    return Ours.text("weblab's tool-calling system prompt", SYSTEM_PROMPT)


def protocol(run: RunUsed) -> ProtocolRecord:
    """Official (forge-eval's own weblab) and this run's side of every protocol element."""
    args = run.task_args
    no_judge = "the verifier checks the answer or the site's state; no LLM judge scores"
    own = own_elements(run, (s.id for s in select_tasks().samples), DEFAULT_MAX_TOKENS, no_judge)
    sites = Ours.files("the six local sites", _HERE / "_sites", _HERE / "_site.py")
    return ProtocolRecord(
        elements=[
            own["task_set"],
            element(
                "harness",
                _harness(OFFICIAL_HARNESS, DEFAULT_MAX_STEPS, DEFAULT_TIME_LIMIT, "auto"),
                _harness(run.harness, args.get("max_steps"), args.get("time_limit"), args.get("observation")),
            ),
            element("agent_prompt", _prompt(OFFICIAL_HARNESS), _prompt(run.harness)),
            own["agent_sampling"],
            own["judge_model"],
            own["judge_prompt"],
            element("user_model", NotUsed(why="single-turn tasks: no simulated user")),
            element("grader", Ours.files("weblab's verifier", _HERE / "_checks.py")),
            element("environment", sites, name="environment: sites"),
            element(
                "environment",
                Unpinned(what="any Chromium that Playwright drives"),
                Value(value=browser_build()),
                name="environment: browser build",
            ),
            element("data", Ours.files("weblab's tasks", _HERE / "_data.py")),
        ]
    )
