"""Per-sample browser episodes for web benchmarks: open one in setup, close it in cleanup."""

from __future__ import annotations

from uuid import uuid4

from inspect_ai.solver import TaskState

from forge_eval.benchmarks.web._binding import bind_env, unbind_env
from forge_eval.benchmarks.web._config import BrowserConfig
from forge_eval.benchmarks.web._env import WebEnv


async def open_episode(state: TaskState, config: BrowserConfig, max_steps: int | None) -> WebEnv:
    """Start the sample's episode at `metadata["start_url"]` and bind it for tools, harness and scorers.

    The task text the judges and the harness read is `metadata["task"]` (else the sample input).
    """
    world = f"{state.sample_id}-e{state.epoch}-{uuid4().hex[:8]}"
    env = WebEnv(config, world=world, max_steps=max_steps)
    bind_env(env)
    await env.start(state.metadata["start_url"], task=state.metadata.get("task") or state.input_text)
    return env


async def close_episode(state: TaskState) -> None:
    """Task cleanup: close the sample's browser context (after scoring, so judges saw the trajectory)."""
    await unbind_env()
