"""Claude Code: everything forge-eval knows about it (pin, launch, proxy wiring, tagging cues, tool rules).

Facts measured on 2.1.197: Anthropic Messages over SSE at
`$ANTHROPIC_BASE_URL/v1/messages`; the four offline variables stop every DNS query (and the title call);
as root it accepts `--dangerously-skip-permissions` only with `IS_SANDBOX=1`.
"""

from pathlib import Path

from forge_eval.harnesses._external import POLICY_MODEL, ExternalHarness, Launch, ProxyEndpoint, json_events
from forge_eval.harnesses._facts import OTHER, HarnessFacts, TaggingCues, reads, shell, writes
from forge_eval.harnesses._npm import NpmPackage
from forge_eval.harnesses._workspace import Workspace

CLAUDE_CODE = NpmPackage("@anthropic-ai/claude-code", "2.1.197", bin="claude")

#: No telemetry, update checks, error reports or title calls: zero DNS queries.
OFFLINE_ENV = {
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_ERROR_REPORTING": "1",
}

FACTS = HarnessFacts(
    name="claude-code",
    aliases=("claude_code", "claude"),
    tagging=TaggingCues(
        title_by_schema=True,
        compaction_phrases=("detailed summary of the conversation", "summary of the conversation so far"),
        # its subagents' system prompts carry `cc_is_subagent=true` in the billing line (seen in 2.1.197)
        subagent_marker="cc_is_subagent=true",
        subagent_by_thread=False,
        subagent_by_alias=True,
        # 2.1.197 offers TaskCreate/TaskUpdate/TaskList/TaskGet for its task list (older: TodoWrite)
        planning_tools=("TaskCreate", "TaskUpdate", "TaskList", "TaskGet", "TodoWrite", "ExitPlanMode"),
    ),
    tools={
        "Bash": shell("command"),
        "Read": reads("file_path"),
        "Write": writes("file_path"),
        "Edit": writes("file_path"),
        "MultiEdit": writes("file_path"),
        "NotebookEdit": writes("notebook_path"),
        "Glob": reads("path", "pattern"),
        "Grep": reads("path"),
        "LS": reads("path"),
        "TodoWrite": OTHER,
        "Task": OTHER,
    },
    # a failed Bash result starts with `Exit code N` (and carries is_error); the rest is the output
    exit_code=r"\AExit code:? (-?\d+)(?:\n|\Z)",
)


def claude_args(
    prompt: str, model: str = POLICY_MODEL, *, bare: bool = False, allowed_tools: list[str] | None = None
) -> list[str]:
    """`claude` print-mode arguments with streamed JSON events.

    Every tool is allowed (`--dangerously-skip-permissions`, which as root needs `IS_SANDBOX=1`: the
    sandbox isolates it) unless `allowed_tools` names the only ones to allow (file edits accepted).
    `bare` keeps only Bash/Edit/Read and a short system prompt (4 KB requests instead of 85 KB).
    """
    args = ["-p", prompt, "--output-format", "stream-json", "--verbose", "--model", model]
    if allowed_tools is None:
        args.append("--dangerously-skip-permissions")
    else:
        args += ["--permission-mode", "acceptEdits", "--allowedTools", *allowed_tools]
    return [*args, *(["--bare"] if bare else [])]


def claude_env(home: Path, base_url: str, key: str, model: str = POLICY_MODEL) -> dict[str, str]:
    """The proxy as the Anthropic endpoint, every model alias mapped to the policy, offline flags."""
    aliases = [f"ANTHROPIC_DEFAULT_{size}_MODEL" for size in ("OPUS", "SONNET", "HAIKU")]
    return {
        "CLAUDE_CONFIG_DIR": str(home / ".claude"),
        "ANTHROPIC_BASE_URL": base_url,
        "ANTHROPIC_API_KEY": key,
        "IS_SANDBOX": "1",
        "CLAUDE_CODE_DISABLE_AUTO_MEMORY": "1",
        "CLAUDE_CODE_SUBAGENT_MODEL": model,
        **{alias: model for alias in aliases},
        **OFFLINE_ENV,
    }


class ClaudeCodeHarness(ExternalHarness):
    name = "claude-code"
    description = f"Anthropic Claude Code {CLAUDE_CODE.version} (claude -p), Messages API through the proxy"
    facts = FACTS
    packages = (CLAUDE_CODE,)

    def launch(
        self, *, prompt: str, proxy: ProxyEndpoint, workspace: Workspace, prefix: Path, lean: bool = False
    ) -> Launch:
        argv = [str(self.binary(prefix)), *claude_args(prompt, bare=lean)]
        return Launch(argv, claude_env(workspace.home, proxy.root, proxy.api_key))

    def final_answer(self, stdout: str) -> str:
        """The `result` event's text (the last assistant text when the run ended without one)."""
        answer = ""
        for event in json_events(stdout):
            if event.get("type") == "result" and isinstance(event.get("result"), str):
                return event["result"]
            if event.get("type") == "assistant":
                texts = [
                    b.get("text", "")
                    for b in event.get("message", {}).get("content", [])
                    if isinstance(b, dict) and b.get("type") == "text"
                ]
                answer = "\n".join(texts) or answer
        return answer
