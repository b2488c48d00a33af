"""The weblab verifier: the answer must contain every expected string; action tasks check site state."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Any

from forge_eval.benchmarks.weblab._data import WebTask


def normalize(text: str) -> str:
    """Lower case, NFKC, no thousands separators or currency signs, single spaces."""
    text = unicodedata.normalize("NFKC", text).lower()
    text = re.sub(r"(?<=\d),(?=\d{3})", "", text).replace("$", "")
    return re.sub(r"\s+", " ", text).strip()


def _contains(answer: str, expected: str) -> bool:
    """Whether `answer` holds `expected` (numbers as whole tokens, so "12" is not found in "2012")."""
    want = normalize(expected)
    if re.fullmatch(r"[\d.]+", want):
        return re.search(rf"(?<![\d.]){re.escape(want)}(?![\d]|\.\d)", answer) is not None
    return want in answer


@dataclass(frozen=True)
class Verdict:
    passed: bool
    explanation: str


def verify(task: WebTask, answer: str | None, state: dict[str, Any] | None) -> Verdict:
    """Check an episode's final answer (information tasks) or the site's final state (action tasks)."""
    if task.state is not None:
        if state is None:
            return Verdict(False, "the site's state could not be read")
        ok = task.state(state)
        return Verdict(ok, f"state {'matches' if ok else 'does not match'}: {task.state_doc}; got {state}")
    if not answer:
        return Verdict(False, "no answer was sent to the user")
    text = normalize(answer)
    missing = [e for e in task.answer if not any(_contains(text, alt) for alt in e.split("|"))]
    if missing:
        return Verdict(False, f"answer {answer!r} lacks {missing}")
    return Verdict(True, f"answer {answer!r} contains {list(task.answer)}")
