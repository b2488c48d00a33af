"""Role tagging rules; which ones apply to a harness comes from its facts (`forge_eval.harnesses`).

Each harness has an ordered list of rules, switched on by its `TaggingCues`; the first rule that returns a
role wins. A rule sees the call's signals (`_signals.CallSignals`) and the rollout context: the main agent's
system-prompt fingerprint and conversation key (taken from the first call that offers tools and is not a
title call), and the role of the chain head the call was merged onto (chain membership). Phrases are matched
case-insensitively.

Verified on recorded traffic (tests/training/test_real_harness_tagging.py): Claude Code's title call and
its Task subagents, and action/answer calls of Claude Code, Codex and OpenClaw. From the harnesses' known
behaviour but not yet seen in recorded traffic here (short tasks never compact): the compaction phrases,
Codex's `/compact` route, subagent conversation keys (Codex `prompt_cache_key`, OpenClaw `session=`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from forge_eval.harnesses import TaggingCues, facts_for
from forge_eval.proxy.records import RoleTag
from forge_eval.training._signals import CallSignals


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


def subagent_by_marker(marker: str) -> Rule:
    """A harness that marks its subagents' requests in the system prompt (Claude Code's billing line)."""

    def rule(s: CallSignals, ctx: TagContext) -> RoleTag | None:
        return "subagent" if marker in s.system_text else None

    return rule


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


@functools.cache
def rules_from(cues: TaggingCues) -> tuple[Rule, ...]:
    """The ordered rule set a harness's cues switch on (helper calls first, the fallback last)."""
    rules: list[Rule] = [title_by_schema] if cues.title_by_schema else []
    if cues.compaction_phrases or cues.compaction_paths:
        rules.append(compaction_by(cues.compaction_phrases, cues.compaction_paths))
    if cues.subagent_marker:
        rules.append(subagent_by_marker(cues.subagent_marker))
    rules.append(subagent_by_chain)
    if cues.subagent_by_thread:
        rules.append(subagent_by_thread)
    rules.append(subagent_by_fingerprint)
    if cues.subagent_by_alias:
        rules.append(subagent_by_alias)
    if cues.aux_without_tools:
        rules.append(aux_without_tools)
    if cues.planning_tools:
        rules.append(planner_by_tools(cues.planning_tools))
    return (*rules, action_if_tool_calls, answer)


def rules_for(harness: str | None) -> tuple[Rule, ...]:
    """The rule set of `harness` from its facts (`forge_eval.harnesses.facts_for`: a harness forge-eval
    does not know gets the generic cues)."""
    return rules_from(facts_for(harness).tagging)


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
