"""Codex CLI: everything forge-eval knows about it (pin, launch, proxy wiring, tagging cues, tool rules).

Facts measured on 0.171.0: it speaks only the Responses API over SSE, needs
a custom provider (the built-in one goes to api.openai.com or tries WebSockets), and with the four
`--disable` flags, analytics and update checks off it makes no DNS query at all.
"""

from pathlib import Path

from forge_eval.harnesses._external import POLICY_MODEL, ExternalHarness, Launch, ProxyEndpoint, json_events
from forge_eval.harnesses._facts import OTHER, HarnessFacts, TaggingCues, ToolUse, reads, shell
from forge_eval.harnesses._npm import NpmPackage
from forge_eval.harnesses._workspace import Workspace

CODEX = NpmPackage("@openai/codex", "0.171.0", bin="codex")
#: The provider's environment variable that holds the API key.
KEY_ENV = "FORGE_KEY"

FACTS = HarnessFacts(
    name="codex",
    aliases=("codex_cli", "codex-cli"),
    tagging=TaggingCues(
        compaction_phrases=("context checkpoint compaction", "summary of the conversation"),
        compaction_paths=("/compact",),
        planning_tools=("update_plan", "create_goal", "update_goal"),
    ),
    tools={
        "exec_command": shell("cmd", cwd_arg="workdir"),
        "shell": shell("command", cwd_arg="workdir"),
        "apply_patch": ToolUse("patch", ("input",)),
        "view_image": reads("path"),
        "write_stdin": OTHER,
        "update_plan": OTHER,
    },
    # the header of exec_command's result (Chunk ID, Wall time, Process exited with code N, ...) ends at
    # the `Output:` line; the status is read there only
    exit_code=r"\A(?:(?!Output:\n)[^\n]*\n)*?(?:Process exited with code|Exit code:) (-?\d+)(?:\n|\Z)",
    # Responses' function_call_output has no error field: Codex's own failure messages of its non-shell
    # tools (view_image of a missing file, a patch that does not apply), as 0.171 words them
    tool_error=r"\A(?:unable to (?:locate|read|process) image|apply_patch verification failed|"
    r"failed to parse function arguments)",
)


def codex_args(
    base_url: str, *, model: str = POLICY_MODEL, env_key: str = KEY_ENV, events: bool = True, retries: int = 0
) -> list[str]:
    """`codex exec` arguments (without the binary and the prompt) for a Responses provider at `base_url`.

    Plugins, update checks and analytics are off so the run stays offline; `events` adds `--json` (JSONL
    events on stdout). `--dangerously-bypass-approvals-and-sandbox`: forge-eval's sandbox isolates it.
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
        f"model_providers.forge.stream_max_retries={retries}",
        f"model_providers.forge.request_max_retries={retries}",
        # a CPU model can think for minutes before its first token (Inspect's codex agent sets the same)
        "model_providers.forge.stream_idle_timeout_ms=3600000",
    ]
    for setting in settings:
        args += ["-c", setting]
    return args


#: Lean mode's base instructions, instead of Codex's own 17.7 KB.
LEAN_INSTRUCTIONS = """\
You are Codex, a coding agent working in a terminal. Run shell commands with the exec_command tool, look at
their output, and keep going until the task is done. Then reply with a short final answer in plain text.
"""


def lean_args(instructions: Path) -> list[str]:
    """Codex with a ~9 KB first request instead of ~40 KB: no multi-agent (11 KB of tool schema), goal,
    image-generation or sleep tools, and short base instructions (measured on 0.171.0)."""
    args = []
    for feature in ("multi_agent", "goals", "image_generation", "sleep_tool"):
        args += ["--disable", feature]
    return [*args, "-c", f"model_instructions_file={instructions}"]


def codex_env(home: Path, key: str) -> dict[str, str]:
    """`CODEX_HOME` under the private home, and the key in the provider's variable."""
    return {"CODEX_HOME": str(home / ".codex"), KEY_ENV: key}


class CodexHarness(ExternalHarness):
    name = "codex"
    description = f"OpenAI Codex CLI {CODEX.version} (codex exec), Responses API through the proxy"
    facts = FACTS
    packages = (CODEX,)

    def launch(
        self, *, prompt: str, proxy: ProxyEndpoint, workspace: Workspace, prefix: Path, lean: bool = False
    ) -> Launch:
        env = codex_env(workspace.home, proxy.api_key)
        (workspace.home / ".codex").mkdir(parents=True, exist_ok=True)
        args = codex_args(proxy.root + "/v1", retries=1)
        files = {}
        if lean:
            instructions = workspace.root / "codex-instructions.md"
            files[instructions] = LEAN_INSTRUCTIONS
            args += lean_args(instructions)
        return Launch([str(self.binary(prefix)), *args, prompt], env, files)

    def final_answer(self, stdout: str) -> str:
        """The text of the last `agent_message` item in the JSONL events."""
        answer = ""
        for event in json_events(stdout):
            item = event.get("item")
            completed = event.get("type") == "item.completed" and isinstance(item, dict)
            if completed and item.get("type") == "agent_message":
                answer = str(item.get("text", ""))
        return answer
