"""The policies' vocabulary, chat templates, tool-call grammar and tool-call parser.

This is what a model server does for a real LM (template, constrained tool-call decoding, tool parser),
written out for the ablation's 43 words: the tiny policy's whole vocabulary is these words (a word-level
vocabulary keeps it small enough to train on CPU: the vocabulary projection dominates a tiny model's
cost); SmolLM2 maps each word to one of its own tokens. The grammar is a function of the request's
offered tools (rendered in the prompt header) and the tokens generated so far, so the trainer recomputes
exactly the constrained distribution the sampler drew from, from the recorded token ids alone.
"""

import json
from abc import ABC, abstractmethod
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
FREE_TEXT_TOOLS = {"update_plan": "plan", "report": "note"}  # tool -> its single text argument
FREE_TEXT_LENGTH = 4
MAX_TURN_TOKENS = FREE_TEXT_LENGTH + 2
# the words the policy may ever generate, the grammar's alphabet
GRAMMAR_WORDS = (*TOOL_WORDS, ANSWER_WORD, *SLOTS, *(str(v) for v in VALUES), *FILLER)


def tool_names(tools: Sequence[dict[str, Any]]) -> list[str]:
    return [str((t.get("function") or {}).get("name", "")) for t in tools]


def content(content: Any) -> str:
    if isinstance(content, list):
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return str(content or "")


def required(tool_choice: Any) -> bool:
    return tool_choice == "required" or isinstance(tool_choice, dict)


class Grammar(ABC):
    """A model's chat template and tool-call grammar over its own token ids.

    Every grammar word is one token of the model (`ids`), so the grammar's state after each generated
    token is known from token ids alone; subclasses say how a prompt is rendered and where its header
    (the offered tools, whether a call is required) is read back from.
    """

    def __init__(self, ids: dict[str, int], end: int) -> None:
        self.ids, self.end = ids, end
        self.words = {i: w for w, i in ids.items()}
        if len(self.words) != len(ids):
            raise ValueError("two grammar words share a token id")
        self.vocabulary = frozenset(ids.values()) | {end}  # every token the policy can generate
        self._slots = frozenset(ids[s] for s in SLOTS)
        self._values = frozenset(ids[str(v)] for v in VALUES)
        self._filler = frozenset(ids[w] for w in FILLER)

    @abstractmethod
    def render_prompt(
        self, messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]], tool_choice: Any
    ) -> list[int]:
        """The chat template: the header, each message, then the generation prompt."""

    @abstractmethod
    def header(self, prompt: Sequence[int]) -> tuple[frozenset[int], bool]:
        """(offered tool ids, tool call required) read back from a rendered prompt."""

    def _word(self, word: str) -> int:
        return self.ids.get(word, self.ids["<unk>"])

    def _text(self, text: str) -> list[int]:
        return [self._word(w) for w in text.split()]

    def render_assistant(self, message: dict[str, Any]) -> list[int]:
        """An assistant turn's tokens exactly as the policy generated them (so prompts extend exactly)."""
        calls = message.get("tool_calls") or []
        if not calls:
            return [*self._text(str(message.get("content") or "")), self.end]
        function = calls[0].get("function") or {}
        name = str(function.get("name", ""))
        try:
            args = json.loads(function.get("arguments") or "{}")
        except ValueError:
            args = {}
        if name in FREE_TEXT_TOOLS:
            return [self._word(name), *self._text(str(args.get(FREE_TEXT_TOOLS[name], ""))), self.end]
        return [self._word(name), *self._text(f"{args.get('slot', '')} {args.get('value', '')}"), self.end]

    def allowed(self, prompt: Sequence[int], generated: Sequence[int]) -> frozenset[int]:
        """The tokens the grammar allows next; empty once the turn is complete."""
        if generated and generated[-1] == self.end:
            return frozenset()
        if not generated:
            tools, required = self.header(prompt)
            return tools if required else tools | {self.ids[ANSWER_WORD]}
        first, n = self.words.get(generated[0]), len(generated)
        if first == ANSWER_WORD:
            return frozenset({self.end})
        if first in FREE_TEXT_TOOLS:
            return self._filler if n <= FREE_TEXT_LENGTH else frozenset({self.end})
        if first == "set":
            return (self._slots, self._values, frozenset({self.end}))[min(n - 1, 2)]
        return frozenset({self.end})

    def parse(self, generated: Sequence[int]) -> tuple[str, list[tuple[str, dict[str, Any]]]]:
        """The tool parser: (text, [(tool name, arguments)]) of one generated turn."""
        body = [self.words[i] for i in generated if i != self.end]
        if not body or body[0] == ANSWER_WORD:
            return " ".join(body), []
        name = body[0]
        if name in FREE_TEXT_TOOLS:
            return "", [(name, {FREE_TEXT_TOOLS[name]: " ".join(body[1:])})]
        slot, value = (body + ["", ""])[1:3]
        return "", [(name, {"slot": slot, "value": int(value) if value.isdigit() else value})]


class WordGrammar(Grammar):
    """The tiny policy's own vocabulary: one token per word (`WORDS`), special tokens for the template."""

    def __init__(self) -> None:
        super().__init__(dict(ID), ID["<end>"])

    def render_prompt(
        self, messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]], tool_choice: Any
    ) -> list[int]:
        ids = [ID["<tools>"], *(self._word(n) for n in tool_names(tools)), ID["</tools>"]]
        if required(tool_choice):
            ids.append(ID["<required>"])
        role_token = {"system": "<sys>", "developer": "<sys>", "user": "<user>", "tool": "<tool>"}
        for m in messages:
            role = m.get("role")
            if role == "assistant":
                ids += [ID["<asst>"], *self.render_assistant(m)]
            else:
                ids += [
                    ID[role_token.get(str(role), "<user>")],
                    *self._text(content(m.get("content"))),
                    self.end,
                ]
        return [*ids, ID["<asst>"]]

    def header(self, prompt: Sequence[int]) -> tuple[frozenset[int], bool]:
        end = list(prompt).index(ID["</tools>"])
        return frozenset(prompt[1:end]), end + 1 < len(prompt) and prompt[end + 1] == ID["<required>"]


WORD_GRAMMAR = WordGrammar()
