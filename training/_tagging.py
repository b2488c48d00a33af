"""Role tagging rules, per harness, in one place.

Each harness has an ordered list of rules; the first rule that returns a role wins. A rule sees the call's
signals (`_signals.CallSignals`) and the rollout context: the main agent's system-prompt fingerprint and
conversation key (taken from the first call that offers tools and is not a title call), and the role of
the chain head the call was merged onto (chain membership). Phrases are matched case-insensitively.

Verified on recorded traffic (tests/training/test_real_harness_tagging.py): Claude Code's title call and
its Task subagents, and action/answer calls of Claude Code, Codex and OpenClaw. From the harnesses' known
behaviour but not yet seen in recorded traffic here (short tasks never compact): the compaction phrases,
Codex's `/compact` route, subagent conversation keys (Codex `prompt_cache_key`, OpenClaw `session=`).
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from forge_eval._registry import Registry
from forge_eval.training._signals import CallSignals
from forge_eval.training.records import RoleTag


@dataclass
class TagContext:
    """What a rule may know about the rest of the rollout."""

    main_fingerprint: str | None = None
    main_thread: str | None = None
    main_alias: str | None = None
    chain_head_role: RoleTag | None = None


Rule = Callable[[CallSignals, TagContext], RoleTag | None]


def title_by_schema(s: CallSignals, ctx: TagContext) -> RoleTag | None:
    """Claude Code's title call: no tools, asks for a structured `{title}` output."""
    return "title" if not s.tools_offered and "title" in s.output_schema_keys else None


def compaction_by(phrases: Sequence[str], paths: Sequence[str] = ()) -> Rule:
    """A call whose last user turn asks for a summary of the conversation (or that hits a compact route)."""
    lowered = tuple(p.lower() for p in phrases)

    def rule(s: CallSignals, ctx: TagContext) -> RoleTag | None:
        text = s.last_user_text.lower()
        hit = any(p in text for p in lowered) or any(s.path.rstrip("/").endswith(p) for p in paths)
        return "compaction" if hit else None

    return rule


def subagent_by_marker(s: CallSignals, ctx: TagContext) -> RoleTag | None:
    """Claude Code marks its subagents' requests in the system prompt's billing line (`cc_is_subagent=true`,
    seen in recorded 2.1.197 traffic; the subagents are started by its `Agent` tool)."""
    return "subagent" if "cc_is_subagent=true" in s.system_text else None


def subagent_by_chain(s: CallSignals, ctx: TagContext) -> RoleTag | None:
    """A call merged onto a chain that a subagent started belongs to that subagent."""
    return "subagent" if ctx.chain_head_role == "subagent" else None


def subagent_by_thread(s: CallSignals, ctx: TagContext) -> RoleTag | None:
    """Another conversation key than the main agent's (Codex thread id, OpenClaw session key)."""
    other = s.thread_key is not None and ctx.main_thread is not None and s.thread_key != ctx.main_thread
    return "subagent" if other else None


def subagent_by_fingerprint(s: CallSignals, ctx: TagContext) -> RoleTag | None:
    """A tool-using call with another system prompt than the main agent's."""
    other = ctx.main_fingerprint is not None and s.system_fingerprint != ctx.main_fingerprint
    return "subagent" if s.tools_offered and other else None


def subagent_by_alias(s: CallSignals, ctx: TagContext) -> RoleTag | None:
    """A tool-using call for another model alias than the main agent's (Claude Code runs some subagents,
    e.g. Explore, on its small model, and `CLAUDE_CODE_SUBAGENT_MODEL` picks another alias)."""
    other = ctx.main_alias is not None and s.alias is not None and s.alias != ctx.main_alias
    return "subagent" if s.tools_offered and other else None


def aux_without_tools(s: CallSignals, ctx: TagContext) -> RoleTag | None:
    """A call offered no tools (and not recognised above) is a harness-internal helper call."""
    return "aux" if not s.tools_offered else None


def planner_by_tools(names: Sequence[str]) -> Rule:
    """A response whose tool calls are all planning tools (todo lists, plan mode, goals)."""
    planning = frozenset(names)

    def rule(s: CallSignals, ctx: TagContext) -> RoleTag | None:
        return "planner" if s.tool_calls and set(s.tool_calls) <= planning else None

    return rule


def action_if_tool_calls(s: CallSignals, ctx: TagContext) -> RoleTag | None:
    return "action" if s.tool_calls else None


def answer(s: CallSignals, ctx: TagContext) -> RoleTag | None:
    """The fallback: a main-agent call that answers in text."""
    return "answer"


TAGGING_RULES: Registry[tuple[Rule, ...]] = Registry("tagging rule set")

TAGGING_RULES.register(
    "claude_code",
    (
        title_by_schema,
        compaction_by(["detailed summary of the conversation", "summary of the conversation so far"]),
        subagent_by_marker,
        subagent_by_chain,
        subagent_by_fingerprint,
        subagent_by_alias,
        aux_without_tools,
        # 2.1.197 offers TaskCreate/TaskUpdate/TaskList/TaskGet for its task list (older: TodoWrite)
        planner_by_tools(["TaskCreate", "TaskUpdate", "TaskList", "TaskGet", "TodoWrite", "ExitPlanMode"]),
        action_if_tool_calls,
        answer,
    ),
)
TAGGING_RULES.register(
    "codex",
    (
        compaction_by(["context checkpoint compaction", "summary of the conversation"], paths=["/compact"]),
        subagent_by_chain,
        subagent_by_thread,
        subagent_by_fingerprint,
        aux_without_tools,
        planner_by_tools(["update_plan", "create_goal", "update_goal"]),
        action_if_tool_calls,
        answer,
    ),
)
TAGGING_RULES.register(
    "openclaw",
    (
        compaction_by(["summarize the conversation", "summary of the conversation"]),
        subagent_by_chain,
        subagent_by_thread,
        subagent_by_fingerprint,
        aux_without_tools,
        action_if_tool_calls,
        answer,
    ),
)
# forge-eval's own ReAct loop and any harness without rules of its own.
GENERIC_RULES: tuple[Rule, ...] = (
    title_by_schema,
    subagent_by_chain,
    subagent_by_thread,
    subagent_by_fingerprint,
    action_if_tool_calls,
    answer,
)
TAGGING_RULES.register("react", GENERIC_RULES)
TAGGING_RULES.register("generic", GENERIC_RULES)


def rules_for(harness: str | None) -> tuple[Rule, ...]:
    """The rule set of `harness`; harnesses without rules of their own use the generic set."""
    return TAGGING_RULES.get(harness) if harness and harness in TAGGING_RULES else GENERIC_RULES


def tag_calls(
    harness: str | None, signals: Sequence[CallSignals], chain_heads: Sequence[int]
) -> list[RoleTag]:
    """Tag the calls of one rollout, in order.

    Args:
        harness: The harness name (selects the rule set).
        signals: The calls' signals, in rollout order.
        chain_heads: For each call, the index of the first call of its chain (itself for a chain head).
    """
    rules = rules_for(harness)
    ctx = TagContext()
    roles: list[RoleTag] = []
    for i, s in enumerate(signals):
        head = chain_heads[i]
        ctx.chain_head_role = roles[head] if head != i else None
        role = next(r for rule in rules if (r := rule(s, ctx)) is not None)
        # The first tool-using call that is not a helper call is the main agent: it defines "main" for
        # the subagent rules and is tagged again against that definition.
        if ctx.main_fingerprint is None and s.tools_offered and role not in ("title", "aux"):
            ctx.main_fingerprint, ctx.main_thread, ctx.main_alias = (
                s.system_fingerprint,
                s.thread_key,
                s.alias,
            )
            role = next(r for rule in rules if (r := rule(s, ctx)) is not None)
        roles.append(role)
    return roles
