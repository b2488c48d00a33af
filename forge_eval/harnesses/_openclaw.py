"""OpenClaw: everything forge-eval knows about it (pin, Node 24, launch, proxy wiring, tagging, tool rules).

Facts measured on 2026.9.6: `openclaw agent exec` runs one headless turn loop
from a JSON config whose only provider is the proxy; it needs Node >= 24.16 (installed from npm), makes
no DNS query, and costs ~21 s before its first model call and ~1.4 GB RSS: run one or two at a time.
Its state (sessions: `agents/<id>/sessions/*.jsonl`) is kept in the sample's home, `~/.openclaw`
(`--state-dir`), where the config is written too, as in OpenClaw's own layout. A benchmark with its own
OpenClaw config (QwenClawBench's `openclaw.json`) runs with it through `with_config`: only the provider
of its primary model is pointed at the sample's proxy.
"""

import copy
import json
from pathlib import Path
from typing import Any

from forge_eval._errors import ForgeError
from forge_eval.harnesses._external import POLICY_MODEL, ExternalHarness, Launch, ProxyEndpoint
from forge_eval.harnesses._facts import OTHER, HarnessFacts, TaggingCues, ToolUse, reads, shell, writes
from forge_eval.harnesses._npm import NODE24, NpmPackage, node24_bin
from forge_eval.harnesses._workspace import Workspace
from forge_eval.sandbox import SandboxLimits

OPENCLAW = NpmPackage("openclaw", "2026.9.6", bin="openclaw")

FACTS = HarnessFacts(
    name="openclaw",
    tagging=TaggingCues(compaction_phrases=("summarize the conversation", "summary of the conversation")),
    tools={
        "exec": shell("command", cwd_arg="workdir"),
        "read": reads("path", "file_path"),
        "write": writes("path", "file_path"),
        "edit": writes("path", "file_path"),
        "ls": reads("path"),
        "apply_patch": ToolUse("patch", ("input",)),
        "process": OTHER,
    },
    # exec's result ends with `(Command exited with code N)` when N != 0
    exit_code=r"\(Command exited with code (-?\d+)\)\s*\Z",
    # over chat completions (no error field) a failed tool's whole result is this JSON object
    tool_error=r'\A\{\s*"status":\s*"error",\s*"tool":',
)


def openclaw_config(
    base_url: str, key: str, api: str = "openai-completions", model: str = POLICY_MODEL
) -> dict:
    """An OpenClaw config whose only provider, `forge`, is the proxy at `base_url` (wire API `api`:
    openai-completions | openai-responses | anthropic-messages; the last takes a URL without /v1)."""
    entry = {
        "id": model,
        "name": "Forge",
        "reasoning": False,
        "input": ["text"],
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
        "contextWindow": 128000,
        "maxTokens": 4096,
    }
    provider = {"baseUrl": base_url, "apiKey": key, "api": api, "models": [entry]}
    return {
        "models": {"mode": "replace", "providers": {"forge": provider}},
        "agents": {"defaults": {"model": {"primary": f"forge/{model}"}}},
    }


#: Lean mode's config on top of `--local-model-lean`: no bundled-skills catalog (7 KB of its system
#: prompt) and the tools listed directly instead of the deferred Tool Search catalog (7 KB more).
LEAN_TOOLS = ["exec", "read", "write", "edit", "ls", "apply_patch", "process"]
LEAN_CONFIG = {"skills": {"allowBundled": []}, "tools": {"toolSearch": False, "allow": LEAN_TOOLS}}


def pointed_config(template: dict[str, Any], base_url: str, key: str) -> tuple[dict[str, Any], str]:
    """`template` (an OpenClaw config) with the provider of its primary model pointed at `base_url` with
    `key`, nothing else changed; and that model (`provider/model`)."""
    doc = copy.deepcopy(template)
    try:
        primary = str(doc["agents"]["defaults"]["model"]["primary"])
        provider = doc["models"]["providers"][primary.split("/", 1)[0]]
    except (KeyError, TypeError, AttributeError):
        raise ForgeError(
            "the OpenClaw config names no primary model (agents.defaults.model.primary) whose provider "
            "is under models.providers",
            hint="use the benchmark's config as upstream ships it",
        ) from None
    provider.update(baseUrl=base_url, apiKey=key)
    return doc, primary


def openclaw_args(
    prompt: str,
    config: Path,
    work: Path,
    model: str = POLICY_MODEL,
    timeout_s: int = 600,
    state_dir: Path | None = None,
    model_ref: str | None = None,
) -> list[str]:
    """`openclaw agent exec` arguments for a config written from `openclaw_config` (`model_ref`: the
    `provider/model` to run, default `forge/<model>`; `state_dir`: keep sessions there)."""
    args = ["agent", "exec", prompt, "--config", str(config), "--model", model_ref or f"forge/{model}"]
    args += ["--state-dir", str(state_dir)] if state_dir is not None else []
    return [*args, "--cwd", str(work), "--json", "--timeout", str(timeout_s)]


def openclaw_env(home: Path, prefix: Path) -> dict[str, str]:
    """Node 24 first on PATH, OpenClaw's home and state under the private home."""
    return {
        "PATH": f"{node24_bin(prefix)}:/usr/local/bin:/usr/bin:/bin",
        "OPENCLAW_HOME": str(home),
        "OPENCLAW_STATE_DIR": str(home / ".openclaw"),
    }


class OpenClawHarness(ExternalHarness):
    name = "openclaw"
    description = f"OpenClaw {OPENCLAW.version} (openclaw agent exec, Node 24), chat API through the proxy"
    facts = FACTS
    packages = (NODE24, OPENCLAW)
    #: A benchmark's own OpenClaw config to run with (`with_config`); None: `openclaw_config`'s.
    config_template: dict[str, Any] | None = None

    def with_config(self, template: dict[str, Any] | None) -> "OpenClawHarness":
        """A copy of this harness that runs with `template`, its primary model's provider pointed at the
        sample's proxy (None: `openclaw_config`'s); the registered harness is shared, so the config is
        set on the copy."""
        chosen = copy.copy(self)
        chosen.config_template = template
        return chosen

    def limits(self) -> "SandboxLimits":
        """2 CPUs, 3 GB: one run peaks at ~1.41 GB RSS (measured), twice the others."""
        return SandboxLimits(memory_mb=3072)

    def launch(
        self, *, prompt: str, proxy: ProxyEndpoint, workspace: Workspace, prefix: Path, lean: bool = False
    ) -> Launch:
        state = workspace.home / ".openclaw"
        config = state / "openclaw.json"
        if self.config_template is not None:
            config_doc, model_ref = pointed_config(self.config_template, proxy.root + "/v1", proxy.api_key)
        else:
            config_doc, model_ref = openclaw_config(proxy.root + "/v1", proxy.api_key), None
        if lean:
            config_doc.update(LEAN_CONFIG)
        text = json.dumps(config_doc, indent=2)
        args = openclaw_args(
            prompt,
            config,
            workspace.work,
            timeout_s=int(self.timeout_s),
            state_dir=state,
            model_ref=model_ref,
        )
        # its reduced local-model tool surface (docs/cli/agent.md of the package)
        argv = [str(self.binary(prefix)), *args, *(["--local-model-lean"] if lean else [])]
        return Launch(argv, openclaw_env(workspace.home, prefix), {config: text})

    def final_answer(self, stdout: str) -> str:
        """`final` of the JSON summary printed at the end."""
        start = stdout.find("{")
        try:
            summary = json.loads(stdout[start:]) if start >= 0 else {}
        except ValueError:
            return ""
        return str(summary.get("final") or "") if isinstance(summary, dict) else ""
