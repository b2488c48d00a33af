"""OSWorld-Verified's protocol record: what upstream's baseline protocol uses, and what a run used.

The official side is the pinned OSWorld tree (`_data.SOURCE`): its task JSONs, evaluators
(`desktop_env/`), baseline agent (`mm_agents/agent.py` + `prompts.py`) and runner (`run.py` defaults,
`lib_run_single.py`'s waits), identified by the sha256 of those files in the pinned snapshot (PINNED,
measured on the snapshot, so a run on another copy of the tree is told apart), on OSWorld's own Ubuntu
VM. A run on the local desktop (Debian apps in a sandbox) is not comparable, nor one with our own
prompt, other sampling, shorter waits or a partial task set.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from forge_eval.benchmarks._benchmark import RunUsed, task_set
from forge_eval.benchmarks.osworld._agent import PROMPT_NAMES, run_defaults
from forge_eval.benchmarks.osworld._chrome import chromium_version
from forge_eval.benchmarks.osworld._data import SOURCE, data_root, load_tasks
from forge_eval.benchmarks.osworld._task import DEFAULT_MAX_STEPS, READY_WAIT, SETTLE_WAIT
from forge_eval.harnesses import HARNESSES
from forge_eval.harnesses.computer import system_prompt as forge_prompt
from forge_eval.rundir import NotUsed, Ours, ProtocolRecord, Upstream, Value, element, sha256_files

#: The files of the tree behind each element.
PARTS = {
    "tasks": ("evaluation_examples/examples", "evaluation_examples/test_all.json"),
    # the in-VM server is part of the grader: the getters read the desktop through it
    "grader": (
        "desktop_env/evaluators",
        "desktop_env/controllers",
        "desktop_env/desktop_env.py",
        "desktop_env/server",
    ),
    "agent": (
        "mm_agents/agent.py",
        "mm_agents/prompts.py",
        "mm_agents/accessibility_tree_wrap",
        "run.py",
        "lib_run_single.py",
    ),
}
#: sha256_files of PARTS in the pinned snapshot (ljxpython/OSWorldUse@f6cee71).
PINNED = {
    "tasks": "1755c75249601c3b97cf7970e6407615c237a583bd9b213f1596e06bcbb53c0b",
    "grader": "5322acc55ac75522053185752a6714c907896caf7024ddf7db1bf67a15396bc5",
    "agent": "b87f050fad055bbeddce006211e05235e7988c5ff1e1c38fe6904d1fca16859a",
}
OFFICIAL_HARNESS = "computer"
OFFICIAL_PROVIDER = "vm"


def tree_digest(tree: Path, part: str) -> str:
    return sha256_files([tree / p for p in PARTS[part]])


def _upstream(part: str, digest: str, symbol: str | None = None, value: Any = None) -> Upstream:
    return Upstream(
        repo=SOURCE.repo,
        commit=SOURCE.revision,
        path=" + ".join(PARTS[part]),
        sha256=digest,
        symbol=symbol,
        value=value,
    )


def _harness(name: str, settings: dict[str, Any]) -> Value:
    value = {"name": name, "version": HARNESSES.get(name).version, **settings}
    label = f"{name} ({value['version']}), " + ", ".join(f"{k} {v}" for k, v in settings.items())
    return Value(value=value, label=label)


def protocol(run: RunUsed) -> ProtocolRecord:
    """Official (the pinned tree's baseline protocol on OSWorld's VM) and this run's side of every element."""
    args = run.task_args
    tree = data_root(args.get("data_dir"))
    defaults = run_defaults(tree)
    action_space = args.get("action_space", "pyautogui")
    observation = args.get("observation", "auto")
    max_steps = args.get("max_steps", DEFAULT_MAX_STEPS)
    per_sample = "the SYS_PROMPT_* of each sample's observation"
    prompt_name = PROMPT_NAMES.get((observation, action_space), per_sample)
    upstream_prompt = args.get("prompt", "upstream") == "upstream"
    # OSWorld reports results per observation type, action space and step cap: those are the run's choice.
    choices = {"action_space": action_space, "observation": observation, "max_steps": max_steps}
    official_harness = {
        **choices,
        "max_trajectory_length": defaults["max_trajectory_length"],
        "pause": defaults["sleep_after_execution"],
        "ready_wait": READY_WAIT,
        "settle_wait": SETTLE_WAIT,
        "waits": "upstream",
    }
    pause = args.get("pause")
    used_harness = {
        **choices,
        "max_trajectory_length": defaults["max_trajectory_length"] if upstream_prompt else None,
        "pause": defaults["sleep_after_execution"] if pause is None else pause,
        "ready_wait": args.get("ready_wait", READY_WAIT),
        "settle_wait": args.get("settle_wait", SETTLE_WAIT),
        "waits": args.get("waits", "upstream"),
    }
    official_prompt = _upstream("agent", PINNED["agent"], symbol=prompt_name)
    if upstream_prompt:
        used_prompt: Upstream | Ours = _upstream("agent", tree_digest(tree, "agent"), symbol=prompt_name)
    else:
        text = forge_prompt(action_space, 1920, 1080)
        used_prompt = Ours.text("forge-eval's computer-use prompt (-T prompt=forge, not comparable)", text)
    sampling_keys = ("max_tokens", "top_p", "temperature")
    no_judge = NotUsed(why="OSWorld's execution-based checkers score the desktop's final state; no LLM judge")
    all_ids = [t.id for t in load_tasks(tree)]
    return ProtocolRecord(
        elements=[
            run.task_set_element(task_set(all_ids, "all")),
            element(
                "harness",
                _harness(OFFICIAL_HARNESS, official_harness),
                _harness(run.harness, used_harness),
                note="observation type, action space and step cap are reported with the number; "
                "waits=ready waits for the desktop to be ready and settled instead of upstream's fixed "
                "sleeps (at most as long; what it waited for is in each sample's metadata)",
            ),
            element("agent_prompt", official_prompt, used_prompt),
            element(
                "agent_sampling",
                _upstream("agent", PINNED["agent"], "run.py defaults", _pick(defaults, sampling_keys)),
                Value(value=_pick(run.sampling, sampling_keys)),
            ),
            element("judge_model", no_judge),
            element("judge_prompt", no_judge),
            element("user_model", NotUsed(why="single-instruction tasks: no simulated user")),
            element("grader", *_sides(tree, "grader")),
            element(
                "environment",
                Value(value={"provider": OFFICIAL_PROVIDER}, label="OSWorld's Ubuntu VM image (provider vm)"),
                _environment(args.get("provider", "local")),
                note="the local desktop runs Debian's apps under Xvfb + openbox in a bubblewrap sandbox, "
                "not OSWorld's Ubuntu VM: app versions, fonts and window manager differ; upstream's in-VM "
                "server runs unchanged but from a read-only folder (not ~/server), not dumpable, reached "
                "only by the run's own process; Chrome tasks run on Debian's Chromium launched as "
                "google-chrome (Chrome's profile folder, first run done, passwords and cookies stored "
                "without a keyring), its debugging port reached by the run directly, not through the "
                "task's socat, and online it reaches the live web through the run's egress gate (public "
                "addresses only; no proxy for the tasks marked proxy: true); GNOME's pieces run without "
                "gnome-shell (gnome-terminal, nautilus, dconf on "
                "the session bus, also at /run/user/1000/bus; openbox given GNOME's Ctrl+Alt+T); sudo with "
                "OSWorld's password is root of a user namespace of the desktop's own uid, so a step's "
                "sudo apt-get/pip install changes nothing (the package must be here already)",
            ),
            element("data", *_sides(tree, "tasks")),
        ]
    )


def _environment(provider: str) -> Value:
    """The run's desktop; the local one names the Chromium that stands in for Google Chrome."""
    if provider != "local":
        return Value(value={"provider": provider})
    browser = f"{chromium_version() or 'Chromium (not installed)'} in place of Google Chrome"
    return Value(value={"provider": provider, "browser": browser}, label=f"provider local, {browser}")


def _sides(tree: Path, part: str) -> tuple[Upstream, Upstream]:
    """The pinned snapshot's and the run's tree's files of `part`."""
    return _upstream(part, PINNED[part]), _upstream(part, tree_digest(tree, part))


def _pick(values: Any, keys: tuple[str, ...]) -> dict[str, Any]:
    return {k: values.get(k) for k in keys}
