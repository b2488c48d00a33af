"""Harnesses: the agent loops benchmarks run in, registered by name in `HARNESSES`.

`react` is Inspect's own ReAct loop; `codex`, `claude-code` and `openclaw` are the real programs, each
with its one home (`_codex.py`, `_claude_code.py`, `_openclaw.py`): npm pin, launch and config, proxy
wiring, role-tagging cues and tool rules. `facts_for(name)` is how training and analysis read the latter.
The benchmarks' own loops live here too (`claw-loop`, `atlas-loop`), as do the browser and desktop loops
(`molmoweb`, `computer`); a benchmark passes them its tools, prompt and options, and this package never
imports a benchmark.

The registry holds the same harnesses whatever was imported before: the built-in ones, plus, on first
lookup, those that other packages advertise under the entry-point group `forge_eval.harnesses` (name =
harness name, value = `module:HarnessClass`) -- the credit ablation's `plan-act` comes in that way, so this
package never imports training. One that fails to import is listed with the error as its requirement
instead of breaking every lookup.
"""

from importlib.metadata import EntryPoint, entry_points
from typing import Any

from inspect_ai.solver import Solver
from inspect_ai.tool import Tool

from forge_eval._errors import ForgeError
from forge_eval._registry import Registry
from forge_eval.harnesses._atlas_loop import AtlasLoopHarness, atlas_loop
from forge_eval.harnesses._claude_code import ClaudeCodeHarness
from forge_eval.harnesses._claw_loop import ClawLoopHarness
from forge_eval.harnesses._codex import CodexHarness
from forge_eval.harnesses._environment import TaskEnvironment, serve_tools
from forge_eval.harnesses._external import ExternalHarness, Launch, ProxyEndpoint
from forge_eval.harnesses._facts import EXIT_CODE, HarnessFacts, TaggingCues, ToolUse
from forge_eval.harnesses._harness import Harness
from forge_eval.harnesses._lookup import facts_among
from forge_eval.harnesses._messages import to_inspect
from forge_eval.harnesses._npm import NODE24, NpmPackage, ensure_installed, node24_bin, npm_prefix
from forge_eval.harnesses._openclaw import OpenClawHarness
from forge_eval.harnesses._react import ReactHarness
from forge_eval.harnesses._seeding import epoch_seed_for, seed_per_epoch
from forge_eval.harnesses._settings import HarnessSettings, current_settings, harness_settings
from forge_eval.harnesses._workspace import KeptWorkspace, kept_workspace, release_workspace
from forge_eval.harnesses.computer import ComputerHarness
from forge_eval.harnesses.molmoweb import BrowserEpisode, MolmoWebHarness, is_text_only

ENTRY_POINT_GROUP = "forge_eval.harnesses"


class UnloadableHarness(Harness):
    """An advertised harness whose module failed to import: it says why wherever it is asked to run."""

    description = "could not be loaded (see its requirements)"

    def __init__(self, point: EntryPoint, error: Exception) -> None:
        self.name = point.name  # per instance: one placeholder per plugin that failed
        reason = f"{type(error).__name__}: {error}"
        self.problem = f"harness {point.name!r} ({point.value}) could not be loaded: {reason}"

    def requirements(self) -> list[str]:
        return [self.problem]

    def agent(self, *, tools: list[Tool], system_prompt: str, **options: Any) -> Solver:
        raise ForgeError(self.problem)


def _load_entry_points() -> None:
    for point in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda p: p.name):
        if point.name in HARNESSES:
            continue  # a built-in harness wins over an advertised one of the same name
        try:
            loaded = point.load()  # importing a harness's module may register it already
        except Exception as e:  # any import-time failure of another package's code
            HARNESSES.register(point.name, UnloadableHarness(point, e))
            continue
        if point.name in HARNESSES:
            continue
        harness = loaded() if isinstance(loaded, type) else loaded
        if not isinstance(harness, Harness) or harness.name != point.name:
            raise ForgeError(
                f"entry point {point.name} = {point.value} is not a Harness named {point.name!r}",
                hint=f'in pyproject.toml: [project.entry-points."{ENTRY_POINT_GROUP}"] NAME = "module:Class"',
            )
        HARNESSES.register(point.name, harness)


HARNESSES: Registry[Harness] = Registry("harness", _load_entry_points)
for _harness in (
    ReactHarness(),
    CodexHarness(),
    ClaudeCodeHarness(),
    OpenClawHarness(),
    MolmoWebHarness(),
    ComputerHarness(),
    ClawLoopHarness(),
    AtlasLoopHarness(),
):
    HARNESSES.register(_harness.name, _harness)


def facts_for(name: str | None) -> HarnessFacts:
    """The facts of harness `name` (registry name or alias); generic facts for a name no harness has."""
    return facts_among((h for _, h in HARNESSES.items()), name)


__all__ = [
    "ENTRY_POINT_GROUP",
    "EXIT_CODE",
    "HARNESSES",
    "AtlasLoopHarness",
    "BrowserEpisode",
    "ClawLoopHarness",
    "ClaudeCodeHarness",
    "CodexHarness",
    "ComputerHarness",
    "ExternalHarness",
    "Harness",
    "HarnessFacts",
    "HarnessSettings",
    "KeptWorkspace",
    "Launch",
    "MolmoWebHarness",
    "NODE24",
    "NpmPackage",
    "OpenClawHarness",
    "ProxyEndpoint",
    "ReactHarness",
    "TaggingCues",
    "TaskEnvironment",
    "ToolUse",
    "UnloadableHarness",
    "atlas_loop",
    "current_settings",
    "ensure_installed",
    "epoch_seed_for",
    "facts_for",
    "harness_settings",
    "is_text_only",
    "kept_workspace",
    "node24_bin",
    "npm_prefix",
    "release_workspace",
    "seed_per_epoch",
    "serve_tools",
    "to_inspect",
]
