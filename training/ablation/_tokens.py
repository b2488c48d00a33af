"""The small policy's vocabulary, chat template, tool-call grammar and tool-call parser.

This is what a model server does for a real LM (template, constrained tool-call decoding, tool parser),
written out for a 40-word vocabulary: a word-level vocabulary keeps the policy small enough to train on
CPU (the vocabulary projection dominates a tiny model's cost). The grammar is a function of the request's
offered tools (rendered in the prompt header) and the tokens generated so far, so the trainer recomputes
exactly the constrained distribution the sampler drew from, from the recorded token ids alone.
"""

import json
from collections.abc import Sequence
from typing import Any

from forge_eval.training.ablation._slots import SLOTS, VALUES

SPECIALS = (
    "<pad>",
    "<unk>",
    "<tools>",
    "</tools>",
    "<required>",
    "<sys>",
    "<user>",
    "<asst>",
    "<tool>",
    "<end>",
)
TOOL_WORDS = ("set", "update_plan", "report")
ANSWER_WORD = "done"
# the words a plan or a review note is made of: free text that never reaches the environment
FILLER = ("check", "first", "then", "later", "fast", "slow", "left", "right", "up", "down", "red", "blue")
PROMPT_WORDS = ("you", "act", "on", "slots", "review", "plans", "goal", "note", "ok", "error")
WORDS: tuple[str, ...] = (
    *SPECIALS,
    *TOOL_WORDS,
    ANSWER_WORD,
    *SLOTS,
    *(str(v) for v in VALUES),
    *FILLER,
    *PROMPT_WORDS,
)
ID = {w: i for i, w in enumerate(WORDS)}
VOCAB_SIZE = len(WORDS)
END = ID["<end>"]
FREE_TEXT_TOOLS = {"update_plan": "plan", "report": "note"}  # tool -> its single text argument
FREE_TEXT_LENGTH = 4


def words(text: str) -> list[int]:
    """Word-level ids; out-of-vocabulary words map to <unk>."""
    return [ID.get(w, ID["<unk>"]) for w in text.split()]


def _tool_names(tools: Sequence[dict[str, Any]]) -> list[str]:
    return [str((t.get("function") or {}).get("name", "")) for t in tools]


def render_assistant(message: dict[str, Any]) -> list[int]:
    """An assistant turn's tokens exactly as the policy generated them (so prompts extend exactly)."""
    calls = message.get("tool_calls") or []
    if not calls:
        return [*words(str(message.get("content") or "")), END]
    function = calls[0].get("function") or {}
    name = str(function.get("name", ""))
    try:
        args = json.loads(function.get("arguments") or "{}")
    except ValueError:
        args = {}
    if name in FREE_TEXT_TOOLS:
        return [ID.get(name, ID["<unk>"]), *words(str(args.get(FREE_TEXT_TOOLS[name], ""))), END]
    return [ID.get(name, ID["<unk>"]), *words(f"{args.get('slot', '')} {args.get('value', '')}"), END]


def _content(content: Any) -> str:
    if isinstance(content, list):
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return str(content or "")


def render_prompt(
    messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]], tool_choice: Any
) -> list[int]:
    """The chat template: a header with the offered tools, then each message, then the generation prompt."""
    ids = [ID["<tools>"], *(ID.get(n, ID["<unk>"]) for n in _tool_names(tools)), ID["</tools>"]]
    if tool_choice == "required" or isinstance(tool_choice, dict):
        ids.append(ID["<required>"])
    role_token = {"system": "<sys>", "developer": "<sys>", "user": "<user>", "tool": "<tool>"}
    for m in messages:
        role = m.get("role")
        if role == "assistant":
            ids += [ID["<asst>"], *render_assistant(m)]
        else:
            ids += [ID[role_token.get(str(role), "<user>")], *words(_content(m.get("content"))), END]
    return [*ids, ID["<asst>"]]


def header(prompt: Sequence[int]) -> tuple[frozenset[int], bool]:
    """(offered tool ids, tool call required) read back from a rendered prompt."""
    end = list(prompt).index(ID["</tools>"])
    return frozenset(prompt[1:end]), end + 1 < len(prompt) and prompt[end + 1] == ID["<required>"]


_SLOT_IDS = frozenset(ID[s] for s in SLOTS)
_VALUE_IDS = frozenset(ID[str(v)] for v in VALUES)
_FILLER_IDS = frozenset(ID[w] for w in FILLER)


def allowed(prompt: Sequence[int], generated: Sequence[int]) -> frozenset[int]:
    """The tokens the grammar allows next; empty once the turn is complete."""
    if generated and generated[-1] == END:
        return frozenset()
    if not generated:
        tools, required = header(prompt)
        return tools if required else tools | {ID[ANSWER_WORD]}
    first, n = generated[0], len(generated)
    if first == ID[ANSWER_WORD]:
        return frozenset({END})
    if WORDS[first] in FREE_TEXT_TOOLS:
        return _FILLER_IDS if n <= FREE_TEXT_LENGTH else frozenset({END})
    if first == ID["set"]:
        return (_SLOT_IDS, _VALUE_IDS, frozenset({END}))[min(n - 1, 2)]
    return frozenset({END})


MAX_TURN_TOKENS = FREE_TEXT_LENGTH + 2


def parse(generated: Sequence[int]) -> tuple[str, list[tuple[str, dict[str, Any]]]]:
    """The tool parser: (text, [(tool name, arguments)]) of one generated turn."""
    body = [WORDS[i] for i in generated if i != END]
    if not body or body[0] == ANSWER_WORD:
        return " ".join(body), []
    name = body[0]
    if name in FREE_TEXT_TOOLS:
        return "", [(name, {FREE_TEXT_TOOLS[name]: " ".join(body[1:])})]
    slot, value = (body + ["", ""])[1:3]
    return "", [(name, {"slot": slot, "value": int(value) if value.isdigit() else value})]
