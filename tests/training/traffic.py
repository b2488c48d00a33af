"""Hand-built call records shaped like the recorded traffic of real harnesses.

Token ids come from a toy word-level tokenizer that renders a conversation the way a chat template does
(role marker, words, end marker), so consecutive calls of one conversation share exact token prefixes, as
engine token ids do. Request bodies follow the facts measured on Claude Code 2.1.197, Codex CLI 0.171.0 and
OpenClaw 2026.9.6: endpoints, system prompt layout, tool names, title / compaction / subagent calls.
"""

import itertools
import json
from dataclasses import dataclass, field
from typing import Any

from forge_eval.proxy.records import CallRecord, RolloutRecord

ROLE_IDS = {"system": 1, "developer": 1, "user": 2, "assistant": 3, "tool": 4}
END = 5


class ToyTokenizer:
    """Word-level ids, stable for the life of the object (ids start at 100)."""

    def __init__(self) -> None:
        self.vocab: dict[str, int] = {}

    def words(self, text: str) -> list[int]:
        return [self.vocab.setdefault(w, 100 + len(self.vocab)) for w in text.split()]

    def message(self, role: str, text: str) -> list[int]:
        return [ROLE_IDS[role], *self.words(text), END]


# the 25 tools Claude Code 2.1.197 offered in recorded traffic; its subagents got 22 (no Agent, no task list)
CLAUDE_TOOLS = [
    "Agent",
    "Bash",
    "CronCreate",
    "CronDelete",
    "CronList",
    "DesignSync",
    "Edit",
    "EnterWorktree",
    "ExitWorktree",
    "NotebookEdit",
    "Read",
    "ReportFindings",
    "ScheduleWakeup",
    "SendMessage",
    "Skill",
    "TaskCreate",
    "TaskGet",
    "TaskList",
    "TaskOutput",
    "TaskStop",
    "TaskUpdate",
    "WebFetch",
    "WebSearch",
    "Workflow",
    "Write",
]
CLAUDE_SUBAGENT_TOOLS = [t for t in CLAUDE_TOOLS if t not in ("Agent", "TaskCreate", "TaskUpdate")]
CODEX_TOOLS = [
    "exec_command",
    "write_stdin",
    "request_user_input",
    "view_image",
    "multi_agent_v1",
    "get_goal",
    "create_goal",
    "update_goal",
    "web_search",
]
OPENCLAW_TOOLS = [
    "apply_patch",
    "edit",
    "exec",
    "ls",
    "process",
    "read",
    "sessions_yield",
    "tool_call",
    "tool_describe",
    "tool_search",
    "write",
]


def chat_tools(names: list[str]) -> list[dict[str, Any]]:
    return [{"type": "function", "function": {"name": n, "parameters": {"type": "object"}}} for n in names]


@dataclass
class Conversation:
    """One agent's message list and its rendered token stream."""

    tok: ToyTokenizer
    messages: list[dict[str, Any]] = field(default_factory=list)
    tokens: list[int] = field(default_factory=list)

    def add(self, role: str, text: str, **extra: Any) -> None:
        self.messages.append({"role": role, "content": text, **extra})
        self.tokens += self.tok.message(role, text)


@dataclass
class RolloutBuilder:
    """Appends CallRecords for one rollout, with monotonic seq and timestamps."""

    rollout_id: str
    harness: str
    api: str
    path: str
    tok: ToyTokenizer = field(default_factory=ToyTokenizer)
    records: list[CallRecord] = field(default_factory=list)
    clock: itertools.count = field(default_factory=lambda: itertools.count(1000))

    def call(
        self,
        conv: Conversation,
        *,
        response: str = "",
        tool: str | None = None,
        args: dict[str, Any] | None = None,
        tools: list[str] | None = None,
        alias: str = "policy",
        original: dict[str, Any] | None = None,
        response_tokens: list[int] | None = None,
        append: bool = True,
        **fields: Any,
    ) -> CallRecord:
        """Record one call on `conv`: prompt = conv tokens, response = the assistant turn's tokens."""
        seq = len(self.records)
        text = response or (f"calling {tool} {json.dumps(args or {})}" if tool else "")
        completion = response_tokens or self.tok.words(text) + [END]
        message: dict[str, Any] = {"role": "assistant", "content": text if not tool else None}
        if tool:
            message["tool_calls"] = [
                {
                    "id": f"call_{seq}",
                    "type": "function",
                    "function": {"name": tool, "arguments": json.dumps(args or {})},
                }
            ]
        served = {"model": alias, "messages": [dict(m) for m in conv.messages]}
        if tools:
            served["tools"] = chat_tools(tools)
        t = float(next(self.clock))
        record = CallRecord(
            call_id=f"{self.rollout_id}-c{seq}",
            rollout_id=self.rollout_id,
            seq=seq,
            api=self.api,
            path=self.path,
            harness=self.harness,
            model_alias=alias,
            original_request={"model": alias, **(original or {})},
            served_request=served,
            upstream_response={
                "choices": [{"message": message, "finish_reason": "tool_calls" if tool else "stop"}]
            },
            finish_reason="tool_calls" if tool else "stop",
            prompt_token_ids=[*conv.tokens, ROLE_IDS["assistant"]],  # + the generation prompt
            completion_token_ids=completion,
            completion_logprobs=[-0.01 * (i % 7 + 1) for i in range(len(completion))],
            policy_version=3,
            t_received=t,
            t_delivered=t + 0.5,
            **fields,
        )
        self.records.append(record)
        if append:
            conv.messages.append(message)
            conv.tokens += [ROLE_IDS["assistant"], *completion]
        return record

    def rollout(self, **fields: Any) -> RolloutRecord:
        base: dict[str, Any] = {
            "rollout_id": self.rollout_id,
            "harness": self.harness,
            "group_uid": "g0",
            "termination": "completed",
            "reward": 1.0,
            "n_calls": len(self.records),
        }
        return RolloutRecord(**{**base, **fields})


CLAUDE_MAIN_SYSTEM = (
    "You are Claude Code, Anthropic's official CLI for Claude. You are an interactive CLI tool "
    "that helps users with software engineering tasks. Working directory: /work/task "
    "Is directory a git repo: No Platform: linux Today's date: 2026-11-29"
)
CLAUDE_SUB_SYSTEM = (
    "You are an agent for Claude Code, Anthropic's official CLI for Claude. Given the user's "
    "message, you should use the tools available to complete the task. Working directory: "
    "/work/task"
)
CLAUDE_COMPACT_PROMPT = (
    "Your task is to create a detailed summary of the conversation so far, paying close "
    "attention to the user's explicit requests and your previous actions."
)


def claude_code_rollout(rollout_id: str = "cc-1") -> tuple[RolloutRecord, list[CallRecord], list[str]]:
    """Claude Code 2.1.197: title call, task-list planning, an Agent subagent, compaction; expected roles."""
    b = RolloutBuilder(rollout_id, "claude_code", "anthropic_messages", "/v1/messages")
    tok = b.tok

    def system(n: int) -> str:  # the billing header changes per request
        return f"x-anthropic-billing-header: cc_version=2.1.197.{n}; cch={4711 + n};\n{CLAUDE_MAIN_SYSTEM}"

    title = Conversation(tok)
    title.add("system", "Summarize this coding conversation in under 50 characters.")
    title.add("user", "create hello.txt containing hi")
    b.call(
        title,
        response='{"title": "Create hello file"}',
        alias="claude-haiku-4-5",
        original={
            "output_config": {
                "format": {
                    "type": "json_schema",
                    "schema": {"type": "object", "properties": {"title": {"type": "string"}}},
                }
            },
            "max_tokens": 32000,
        },
    )

    main = Conversation(tok)
    main.add("system", system(0))
    main.add("user", "<system-reminder> context </system-reminder> create hello.txt containing hi")
    main_alias = "claude-opus-4-8"

    def main_call(**kw: Any) -> CallRecord:
        main.messages[0]["content"] = system(len(b.records))  # volatile header; tokens stay the cached ones
        return b.call(
            main,
            tools=CLAUDE_TOOLS,
            alias=main_alias,
            original={"thinking": {"type": "adaptive"}, "max_tokens": 64000},
            **kw,
        )

    main_call(tool="TaskCreate", args={"subject": "write hello.txt", "description": "create the file"})
    main.add("tool", "Task #1 created successfully")
    main_call(tool="Agent", args={"description": "inspect dir", "prompt": "list files in /work/task"})

    sub = Conversation(tok)
    sub.add("system", CLAUDE_SUB_SYSTEM)
    sub.add("user", "list files in /work/task")
    b.call(sub, tools=CLAUDE_SUBAGENT_TOOLS, alias=main_alias, tool="Bash", args={"command": "ls /work/task"})
    sub.add("tool", "README.md")
    b.call(sub, tools=CLAUDE_SUBAGENT_TOOLS, alias=main_alias, response="The directory holds README.md only.")

    main.add("tool", "The directory holds README.md only.")
    main_call(tool="Bash", args={"command": "echo hi > hello.txt", "description": "write file"})
    main.add("tool", "(Bash completed with no output)")

    compact = Conversation(tok, list(main.messages), list(main.tokens))
    compact.add("user", CLAUDE_COMPACT_PROMPT)
    b.call(compact, alias=main_alias, response="Summary: the user asked for hello.txt; it was written.")

    after = Conversation(tok)
    after.add("system", system(99))
    after.add(
        "user", "This session is being continued from a previous conversation. Summary: hello.txt written."
    )
    b.call(after, tools=CLAUDE_TOOLS, alias=main_alias, response="Created hello.txt with hi.")
    roles = ["title", "planner", "action", "subagent", "subagent", "action", "compaction", "answer"]
    return b.rollout(answer="Created hello.txt with hi."), b.records, roles


CODEX_DEVELOPER = "You are Codex, a coding agent based on GPT-5. You and the user share the same workspace."


def codex_rollout(rollout_id: str = "cx-1") -> tuple[RolloutRecord, list[CallRecord], list[str]]:
    """Codex CLI 0.171.0 (Responses API): developer prompt, goals, a multi-agent subagent thread."""
    b = RolloutBuilder(rollout_id, "codex", "responses", "/v1/responses")
    tok = b.tok
    thread = "019a-main-thread"
    main = Conversation(tok)
    main.add("developer", CODEX_DEVELOPER)
    main.add("user", "<environment_context> cwd /work/task </environment_context>")
    main.add("user", "create hello.txt containing hi")
    opts = {"prompt_cache_key": thread, "store": False, "stream": True, "parallel_tool_calls": True}
    b.call(main, tools=CODEX_TOOLS, original=opts, tool="create_goal", args={"goal": "hello.txt exists"})
    main.add("tool", "goal created")
    b.call(main, tools=CODEX_TOOLS, original=opts, tool="exec_command", args={"cmd": "echo hi > hello.txt"})
    main.add("tool", "Chunk ID: 1 Process exited with code 0")
    b.call(main, tools=CODEX_TOOLS, original=opts, tool="multi_agent_v1", args={"task": "verify hello.txt"})

    sub = Conversation(tok)
    sub.add("developer", CODEX_DEVELOPER)
    sub.add("user", "verify hello.txt")
    sub_opts = {**opts, "prompt_cache_key": "019a-sub-thread"}
    b.call(sub, tools=CODEX_TOOLS, original=sub_opts, tool="exec_command", args={"cmd": "cat hello.txt"})

    main.add("tool", "subagent: hello.txt contains hi")
    b.call(main, tools=CODEX_TOOLS, original=opts, response="Done: hello.txt contains hi.")
    roles = ["planner", "action", "action", "subagent", "answer"]
    return b.rollout(answer="Done: hello.txt contains hi."), b.records, roles


OPENCLAW_SYSTEM = (
    "You are a personal assistant running inside OpenClaw. Tooling: exec read write edit apply_patch"
)


def openclaw_rollout(rollout_id: str = "oc-1") -> tuple[RolloutRecord, list[CallRecord], list[str]]:
    """OpenClaw 2026.9.6 in openai-completions mode; session key only in the user text; one subagent."""
    b = RolloutBuilder(rollout_id, "openclaw", "chat", "/v1/chat/completions")
    tok = b.tok
    main = Conversation(tok)
    main.add("system", OPENCLAW_SYSTEM)
    main.add(
        "user", "create hello.txt containing hi Runtime: agent=main | session=agent:main:explicit:s1 | x"
    )
    main.add("user", "<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>> none")
    b.call(main, tools=OPENCLAW_TOOLS, tool="exec", args={"command": "echo hi > hello.txt"})
    main.add("tool", "(no output)")
    sub = Conversation(tok)
    sub.add("system", OPENCLAW_SYSTEM)
    sub.add("user", "check hello.txt Runtime: agent=main | session=agent:main:subagent:s2 | x")
    b.call(sub, tools=OPENCLAW_TOOLS, tool="read", args={"path": "hello.txt"})
    b.call(main, tools=OPENCLAW_TOOLS, response="hello.txt now contains hi.")
    roles = ["action", "subagent", "answer"]
    return b.rollout(answer="hello.txt now contains hi."), b.records, roles
