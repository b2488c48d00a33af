"""Harnesses: the agent loops benchmarks run in, registered by name in `HARNESSES`.

`react` is Inspect's own ReAct loop; `codex`, `claude-code` and `openclaw` are the real programs, each
with its one home (`_codex.py`, `_claude_code.py`, `_openclaw.py`): npm pin, launch and config, proxy
wiring, role-tagging cues and tool rules. `facts_for(name)` is how training and analysis read the latter.
"""

from forge_eval._registry import Registry
from forge_eval.harnesses._claude_code import ClaudeCodeHarness
from forge_eval.harnesses._codex import CodexHarness
from forge_eval.harnesses._environment import TaskEnvironment, serve_tools, task_environment
from forge_eval.harnesses._external import ExternalHarness, Launch, ProxyEndpoint
from forge_eval.harnesses._facts import HarnessFacts, TaggingCues, ToolUse
from forge_eval.harnesses._harness import Harness
from forge_eval.harnesses._lookup import facts_among
from forge_eval.harnesses._npm import NpmPackage, ensure_installed, npm_prefix
from forge_eval.harnesses._openclaw import OpenClawHarness
from forge_eval.harnesses._react import ReactHarness
from forge_eval.harnesses._seeding import epoch_seed_for, seed_per_epoch
from forge_eval.harnesses._settings import HarnessSettings, current_settings, harness_settings
from forge_eval.harnesses._workspace import KeptWorkspace, kept_workspace, release_workspace
from forge_eval.harnesses.computer import ComputerHarness
from forge_eval.harnesses.molmoweb import MolmoWebHarness

HARNESSES: Registry[Harness] = Registry("harness")
for _harness in (
    ReactHarness(),
    CodexHarness(),
    ClaudeCodeHarness(),
    OpenClawHarness(),
    MolmoWebHarness(),
    ComputerHarness(),
):
    HARNESSES.register(_harness.name, _harness)


def facts_for(name: str | None) -> HarnessFacts:
    """The facts of harness `name` (registry name or alias); generic facts for a name no harness has."""
    return facts_among((h for _, h in HARNESSES.items()), name)


__all__ = [
    "HARNESSES",
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
    "NpmPackage",
    "OpenClawHarness",
    "ProxyEndpoint",
    "ReactHarness",
    "TaggingCues",
    "TaskEnvironment",
    "ToolUse",
    "current_settings",
    "ensure_installed",
    "epoch_seed_for",
    "facts_for",
    "harness_settings",
    "kept_workspace",
    "npm_prefix",
    "release_workspace",
    "seed_per_epoch",
    "serve_tools",
    "task_environment",
]
