"""The OSWorld-Verified Inspect task: one desktop per sample, OSWorld's setup, the agent loop, its checker.

Per sample: the provider starts a fresh desktop (apps at their first-run-done state; the bare desktop
started ahead while the previous sample's agent worked, `_spare`), OSWorld's own
SetupController runs the task's `config` steps through the controller, the runner waits for the desktop
to be ready (upstream's `lib_run_single.py` sleeps 60 s; `-T waits=ready` waits for what the sleep stands
for, `_waits`), the harness drives the desktop with OSWorld's baseline agent, the runner waits for the
desktop to settle (upstream: 20 s) and OSWorld's `DesktopEnv.evaluate` (postconfig, getters, metric;
infeasible = last action FAIL) gives the score. The desktop is stopped whatever happened. All of
OSWorld's code (setup, agent, checkers) comes from the tree the task data comes from.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.log import transcript
from inspect_ai.model import GenerateConfig, get_model
from inspect_ai.scorer import Score, Target, mean, scorer
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.util import LimitExceededError

from forge_eval._errors import UsageError
from forge_eval.benchmarks._selection import Selection
from forge_eval.benchmarks._task import benchmark_task
from forge_eval.benchmarks.osworld._agent import UpstreamPolicy, run_defaults
from forge_eval.benchmarks.osworld._client import DesktopClient
from forge_eval.benchmarks.osworld._data import OSWorldTask, data_root, files_dir, load_tasks, task_cache_dir
from forge_eval.benchmarks.osworld._desktop import LocalDesktop
from forge_eval.benchmarks.osworld._env import ACTION_SPACES, OBSERVATION_TYPES, STEP_CAPS, make_env
from forge_eval.benchmarks.osworld._home import PROVISIONERS
from forge_eval.benchmarks.osworld._providers import PROVIDERS, Provider, Session, make_provider
from forge_eval.benchmarks.osworld._spare import DesktopTurns
from forge_eval.benchmarks.osworld._support import APP_PROGRAMS, split_runnable, support_context
from forge_eval.benchmarks.osworld._waits import WAIT_POLICIES, Desktop, WaitPolicy, WaitRecord
from forge_eval.harnesses import HARNESSES
from forge_eval.harnesses.computer import Observation, bind_computer, observation_for

DEFAULT_MAX_STEPS = 15
#: Seconds upstream's runner waits after the task's setup before the first observation, and after the
#: agent's last action before `evaluate()` (`lib_run_single.run_single_example`).
READY_WAIT = 60.0
SETTLE_WAIT = 20.0
#: The agent's prompting: OSWorld's baseline agent from the tree, or forge-eval's own (not comparable).
PROMPTS = ("upstream", "forge")


@dataclass
class Episode:
    """A sample's desktop and OSWorld env; implements the harness's `Computer`."""

    task: OSWorldTask
    session: Session
    env: Any
    action_space: str
    observation_type: str

    @property
    def screen_size(self) -> tuple[int, int]:
        return self.session.screen

    async def observe(self) -> Observation:
        controller = self.env.controller
        screenshot = None
        tree = None
        if "screenshot" in self.observation_type:
            screenshot = await anyio.to_thread.run_sync(controller.get_screenshot)
        if "a11y_tree" in self.observation_type:
            tree = await anyio.to_thread.run_sync(controller.get_accessibility_tree)
        return Observation(screenshot=screenshot, a11y_tree=tree)

    async def act(self, action: Any) -> bool:
        """Upstream's `DesktopEnv.step`; whether it ended the episode (DONE or FAIL, word or JSON)."""
        _, _, done, _ = await anyio.to_thread.run_sync(self.env.step, action)
        return bool(done)

    @functools.cached_property
    def desktop(self) -> Desktop:
        """What the wait policies read: the desktop's server (one client per episode, closed with its
        session), and the screenshot and tree upstream's controller fetches for the agent."""
        client = DesktopClient(self.session.host, self.session.port)
        self.session.on_stop(client.close)
        controller = self.env.controller
        return Desktop(client, controller.get_screenshot, controller.get_accessibility_tree)


#: One desktop at a time per process, the next one started ahead (`_spare`).
_TURNS = DesktopTurns()
SCORE_KEY = "osworld_score"


def apps_of(task: OSWorldTask) -> set[str]:
    """The provisioned apps a task uses (keys of the home provisioners)."""
    programs = {APP_PROGRAMS.get(a.lower(), a.lower()) for a in task.raw.get("related_apps", [])}
    return {p for p in programs if p in PROVISIONERS}


def start_episode(
    task: OSWorldTask,
    provider: Provider,
    *,
    tree: Path,
    action_space: str,
    observation_type: str,
    pause: float,
    desktop: LocalDesktop | None = None,
) -> Episode:
    """Start a desktop (or take `desktop`, started ahead by `provider.bare_desktop`), run the task's setup
    steps on it with `tree`'s code, wrap it as an Episode (blocking)."""
    session = provider.start(apps_of(task), desktop)
    try:
        env = make_env(
            task.raw,
            tree=tree,
            host=session.host,
            port=session.port,
            vlc_port=session.vlc_port,
            chromium_port=session.chromium_port,
            files_dir=files_dir(),
            cache_dir=task_cache_dir(task.id),
            action_space=action_space,
            observation_type=observation_type,
            screen=session.screen,
            pause=pause,
        )
        env.setup_controller.setup(env.config)
    except BaseException:
        session.stop()
        raise
    return Episode(task, session, env, action_space, observation_type)


def evaluate(episode: Episode) -> tuple[float, str]:
    """OSWorld's score of the episode and a short explanation (blocking)."""
    try:
        value = float(episode.env.evaluate())
    except Exception as exc:  # the checker's own failure (e.g. the result file was never written)
        return 0.0, f"checker raised {type(exc).__name__}: {exc}"[:500]
    return value, f"OSWorld checker {episode.task.evaluator.get('func')} -> {value}"


def to_sample(task: OSWorldTask) -> Sample:
    return Sample(
        id=task.id,
        input=task.instruction,
        target="FAIL" if task.infeasible else "",
        metadata={"domain": task.domain, "infeasible": task.infeasible, "task": task.raw},
    )


@solver
def osworld_episode(
    tree: str,
    harness: str = "computer",
    max_steps: int = DEFAULT_MAX_STEPS,
    provider: str = "local",
    action_space: str = "pyautogui",
    observation: str = "auto",
    pause: float = 0.0,
    prompt: str = "upstream",
    sampling: dict[str, Any] | None = None,
    ready_wait: float = READY_WAIT,
    settle_wait: float = SETTLE_WAIT,
    waits: str = "upstream",
) -> Solver:
    """Start the sample's desktop, run the agent on it, score it with OSWorld's checker, stop the desktop.

    One solver rather than setup/solver/cleanup, so that the desktop (its processes, display and
    temporary user) is stopped whatever happens, and a run stopped by a message or time limit is still
    scored on the desktop it left.
    """
    root = Path(tree)
    wait = WAIT_POLICIES.get(waits)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        chosen = make_provider(provider, root)
        observation_type = observation_for(str(get_model()), observation)
        policy = None
        if prompt == "upstream":
            policy = UpstreamPolicy(root, observation_type, action_space, sampling or {})
        agent = HARNESSES.get(harness).solver(tools=[], system_prompt="", max_steps=max_steps, policy=policy)
        task_ = OSWorldTask(state.metadata["domain"], state.metadata["task"])
        state.metadata.update(observation=observation_type, provider=provider, prompt=prompt)
        async with _TURNS.turn():
            desktop, started = await _TURNS.take(chosen)
            state.metadata["desktop_start"] = started.to_dict()
            episode = await anyio.to_thread.run_sync(
                lambda: start_episode(
                    task_,
                    chosen,
                    tree=root,
                    action_space=action_space,
                    observation_type=observation_type,
                    pause=pause,
                    desktop=desktop,
                )
            )
            try:
                bind_computer(episode)
                _record(state, await wait.ready(episode.desktop, ready_wait))
                _TURNS.prestart(chosen)
                try:
                    state = await agent(state, generate)
                except LimitExceededError:
                    await _score(state, episode, wait, settle_wait)
                    raise
                await _score(state, episode, wait, settle_wait)
            finally:
                bind_computer(None)
                with anyio.CancelScope(shield=True):
                    await anyio.to_thread.run_sync(episode.session.stop)
        return state

    return solve


def _record(state: TaskState, waited: WaitRecord) -> None:
    """What a wait waited for and how long: in the sample's metadata and its transcript."""
    state.metadata.setdefault("waits", []).append(waited.to_dict())
    transcript().info(waited.to_dict(), source="osworld waits")


async def _score(state: TaskState, episode: Episode, wait: WaitPolicy, settle_wait: float) -> None:
    with anyio.CancelScope(shield=True):
        _record(state, await wait.settled(episode.desktop, settle_wait))
        value, explanation = await anyio.to_thread.run_sync(evaluate, episode)
    history = episode.env.action_history
    state.store.set(
        SCORE_KEY,
        {
            "value": value,
            "explanation": explanation,
            "actions": len(history),
            "last_action": _special(history[-1]) if history else None,
        },
    )


def _special(action: Any) -> str | None:
    """WAIT, DONE or FAIL when `action` is one, as a word or as computer_13's JSON action."""
    kind = action.get("action_type") if isinstance(action, dict) else action
    return kind if kind in ("DONE", "FAIL", "WAIT") else None


@scorer(metrics=[mean()])
def osworld_scorer():  # type: ignore[no-untyped-def]
    """OSWorld's own checker's result, taken on the desktop before it was stopped (see osworld_episode)."""

    async def score(state: TaskState, target: Target) -> Score:
        result = state.store.get(SCORE_KEY)
        if result is None:
            return Score(value=0.0, explanation="the episode ended before the checker ran")
        last = result["last_action"]
        return Score(
            value=result["value"],
            answer=last,
            explanation=result["explanation"],
            metadata={"infeasible": state.metadata.get("infeasible"), "actions": result["actions"]},
        )

    return score


def check_choices(
    action_space: str = "pyautogui",
    observation: str = "auto",
    prompt: str = "upstream",
    waits: str = "upstream",
) -> None:
    """Refuse a value the task's named choices do not take (run before anything is created: the plan's
    task selection calls it)."""
    WAIT_POLICIES.get(waits)
    choices = {
        "action space": (action_space, ACTION_SPACES),
        "observation": (observation, ("auto", *OBSERVATION_TYPES)),
        "prompt": (prompt, PROMPTS),
    }
    for name, (value, valid) in choices.items():
        if value not in valid:
            raise UsageError(f"unknown {name} {value!r}", hint=f"use one of: {', '.join(map(str, valid))}")


def select_tasks(
    data_dir: Path | str | None = None,
    provider: str = "local",
    subset: str = "all",
    task_ids: str | None = None,
    domain: str | None = None,
    action_space: str = "pyautogui",
    observation: str = "auto",
    prompt: str = "upstream",
    waits: str = "upstream",
) -> Selection:
    """The chosen tasks that `provider` can run, and the others with the reason; a named choice the task
    does not take is refused here, before the run creates anything."""
    check_choices(action_space=action_space, observation=observation, prompt=prompt, waits=waits)
    PROVIDERS.get(provider)  # an unknown one lists the valid names here, not once the run has started
    tasks, skipped = runnable(data_root(data_dir), provider, subset, task_ids, domain)
    return Selection([to_sample(t) for t in tasks], skipped)


def runnable(
    root: Path, provider: str, subset: str = "all", task_ids: str | None = None, domain: str | None = None
) -> tuple[list[OSWorldTask], dict[str, str]]:
    """The chosen tasks split into runnable ones and skipped ones (id -> reason)."""
    return split_runnable(load_tasks(root, subset, task_ids, domain), support_context(provider, root))


@task
def osworld(
    seed: int = 0,
    harness: str = "computer",
    provider: str = "local",
    subset: str = "all",
    domain: str | None = None,
    task_ids: str | None = None,
    action_space: str = "pyautogui",
    observation: str = "auto",
    max_steps: int = DEFAULT_MAX_STEPS,
    pause: float | None = None,
    max_tokens: int | None = None,
    temperature: float | None = None,
    top_p: float | None = None,
    prompt: str = "upstream",
    ready_wait: float = READY_WAIT,
    settle_wait: float = SETTLE_WAIT,
    waits: str = "upstream",
    data_dir: str | None = None,
) -> Task:
    """OSWorld-Verified: real desktop tasks scored by OSWorld's own execution-based checkers.

    Args:
        seed: Sampling seed passed to the model.
        harness: Harness name (default `computer`, OSWorld's observe-act loop).
        provider: Where desktops run: local, podman, docker or vm.
        subset: all, nogdrive, small or infeasible (OSWorld's task lists).
        domain: Only this domain (chrome, gimp, libreoffice_calc, ..., vs_code).
        task_ids: Comma-separated task ids (overrides subset and domain).
        action_space: pyautogui or computer_13.
        observation: screenshot, a11y_tree, screenshot_a11y_tree, or auto (a11y tree for text-only models).
        max_steps: Step cap (OSWorld reports 15, 50 and 100).
        pause: Seconds after each action before observing (default: run.py's sleep_after_execution).
        max_tokens: Most tokens per model reply (default: run.py's).
        temperature: Sampling temperature (default: run.py's).
        top_p: Nucleus sampling (default: run.py's).
        prompt: upstream (OSWorld's baseline agent from the tree) or forge (our own prompt; not comparable).
        ready_wait: Seconds between the task's setup and the first observation (upstream: 60); with
            `waits=ready`, the most it waits.
        settle_wait: Seconds between the agent's last action and the checker (upstream: 20); with
            `waits=ready`, the most it waits.
        waits: upstream (the fixed sleeps, comparable) or ready (until the desktop is ready and settled:
            launched apps up, screen, tree and files still, CPU idle; not comparable).
        data_dir: A checkout of the OSWorld tree (task data, evaluators and agent of one commit).
    """
    if max_steps < 1:
        raise UsageError(
            f"max_steps must be >= 1, got {max_steps}",
            hint=f"OSWorld reports {', '.join(map(str, STEP_CAPS))}",
        )
    if harness != "computer":
        HARNESSES.get(harness)
        raise UsageError(
            f"OSWorld runs with the 'computer' harness (its observe-act loop), not '{harness}'",
            hint="drop --harness or pass --harness computer",
        )
    selection = select_tasks(
        data_dir, provider, subset, task_ids, domain, action_space, observation, prompt, waits
    )
    tree = data_root(data_dir)
    upstream = run_defaults(tree)
    sampling = {
        "max_tokens": upstream["max_tokens"] if max_tokens is None else max_tokens,
        "top_p": upstream["top_p"] if top_p is None else top_p,
        "temperature": upstream["temperature"] if temperature is None else temperature,
    }
    episode = osworld_episode(
        str(tree),
        harness,
        max_steps,
        provider,
        action_space,
        observation,
        upstream["sleep_after_execution"] if pause is None else pause,
        prompt,
        sampling,
        ready_wait,
        settle_wait,
        waits,
    )
    return benchmark_task(
        "osworld",
        selection,
        seed=seed,
        harness=harness,
        agent=lambda _harness: episode,
        scorer=osworld_scorer(),
        config=GenerateConfig(**sampling),
        metadata={
            "provider": provider,
            "action_space": action_space,
            "max_steps": max_steps,
            "prompt": prompt,
            "waits": waits,
            "skipped": len(selection.skipped),
        },
    )
