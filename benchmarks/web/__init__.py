"""A real browser for web agents: Playwright-driven Chromium episodes with the MolmoWeb action set.

`WebEnv` is one episode (its own context, 1280x720, en-US, UTC, and a network policy that lets it load only
the benchmark's own sites and, where the benchmark needs it, the public web); `ACTIONS` holds the
MolmoWeb JSON actions; `browser_tools()` exposes them to Inspect agents; every step is recorded in a
`Trajectory` (screenshots + actions) for scorers and judges. Playwright is an optional dependency
(`pip install 'forge-eval[web]'`); importing this package does not need it.
"""

from forge_eval.benchmarks.services import WORLD_HEADER
from forge_eval.benchmarks.web._actions import ACTIONS, Action, ActionError, ActionSpec, parse_action
from forge_eval.benchmarks.web._agent import web_agent
from forge_eval.benchmarks.web._binding import bind_env, current_env, unbind_env
from forge_eval.benchmarks.web._config import (
    EXECUTABLE_ENV,
    BrowserConfig,
    BrowserUnavailableError,
    browser_build,
    browser_requirements,
    find_executable,
    require_playwright,
)
from forge_eval.benchmarks.web._egress import EgressGate
from forge_eval.benchmarks.web._env import BrowserCrashedError, BrowserSession, WebEnv
from forge_eval.benchmarks.web._episode import close_episode, open_episode
from forge_eval.benchmarks.web._live import (
    DEFAULT_MAX_STEPS,
    DEFAULT_TIME_LIMIT,
    LIVE_HARNESS,
    LiveOptions,
    LiveProtocol,
    LiveWebBenchmark,
    live_official,
    live_sample,
    live_web_available,
    live_web_options,
    live_web_task,
)
from forge_eval.benchmarks.web._policy import NetworkPolicy
from forge_eval.benchmarks.web._tools import browser_tools, observation_content
from forge_eval.benchmarks.web._trajectory import Observation, Step, Trajectory
from forge_eval.benchmarks.web._upstream import fara_source, locate_version, molmoweb_source

__all__ = [
    "ACTIONS",
    "DEFAULT_MAX_STEPS",
    "DEFAULT_TIME_LIMIT",
    "EXECUTABLE_ENV",
    "LIVE_HARNESS",
    "WORLD_HEADER",
    "Action",
    "ActionError",
    "ActionSpec",
    "BrowserConfig",
    "BrowserCrashedError",
    "BrowserSession",
    "BrowserUnavailableError",
    "EgressGate",
    "LiveOptions",
    "LiveProtocol",
    "LiveWebBenchmark",
    "NetworkPolicy",
    "Observation",
    "Step",
    "Trajectory",
    "WebEnv",
    "bind_env",
    "browser_requirements",
    "browser_build",
    "browser_tools",
    "close_episode",
    "current_env",
    "fara_source",
    "find_executable",
    "live_official",
    "live_sample",
    "live_web_available",
    "live_web_options",
    "live_web_task",
    "locate_version",
    "molmoweb_source",
    "observation_content",
    "open_episode",
    "parse_action",
    "require_playwright",
    "unbind_env",
    "web_agent",
]
