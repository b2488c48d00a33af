"""The current sample's `WebEnv`, found by the tools, harnesses and scorers of that sample.

The env is a live object (not JSON), so the sample store holds only a key into this process's table.
"""

from __future__ import annotations

from uuid import uuid4

from inspect_ai.util import store

from forge_eval._errors import ForgeError
from forge_eval.benchmarks.web._env import WebEnv

_STORE_KEY = "forge_web_env"
_ENVS: dict[str, WebEnv] = {}


def bind_env(env: WebEnv) -> None:
    """Make `env` the current sample's browser episode."""
    key = uuid4().hex
    _ENVS[key] = env
    store().set(_STORE_KEY, key)


def current_env() -> WebEnv:
    """The current sample's browser episode (set up by the benchmark's setup solver)."""
    key = store().get(_STORE_KEY)
    if key is None or key not in _ENVS:
        raise ForgeError(
            "no browser episode is bound to this sample",
            hint="web tools and the molmoweb harness run only inside a web benchmark's task",
        )
    return _ENVS[key]


async def unbind_env() -> WebEnv | None:
    """Forget and close the current sample's episode; returns it (its trajectory stays readable)."""
    key = store().get(_STORE_KEY)
    env = _ENVS.pop(key, None) if key else None
    if env is not None:
        await env.close()
    return env
