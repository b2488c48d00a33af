"""A scripted claim judge for the parity test: its verdict is a function of the claim and the answer in
the prompt, and the first call on some claims is not JSON (upstream then retries). The same function
answers upstream's own scoring script (through a stand-in `litellm`) and forge-eval's scorer (through an
Inspect model API), so the two can be compared claim by claim."""

from __future__ import annotations

import hashlib
import json

OUTCOMES = ("fulfilled", "partially_fulfilled", "not_fulfilled", "retry-then-fulfilled")
_CLAIM = "CLAIM TO EVALUATE:\n"
_RESPONSE = "\nMODEL RESPONSE TO ANALYZE:\n"
_END = "\nINSTRUCTIONS:"


def parts(prompt: str) -> tuple[str, str]:
    """The claim and the response upstream's prompt carries."""
    claim = prompt.split(_CLAIM, 1)[1].split(_RESPONSE, 1)[0]
    response = prompt.split(_RESPONSE, 1)[1].rsplit(_END, 1)[0]
    return claim, response


def outcome(claim: str, response: str) -> str:
    digest = hashlib.sha256(f"{claim}\0{response}".encode()).digest()
    return OUTCOMES[digest[0] % len(OUTCOMES)] if response else "not_fulfilled"


def reply(prompt: str, seen: dict[str, int]) -> str:
    """The judge's reply text to `prompt`; `seen` counts earlier calls per prompt (for the retry case)."""
    claim, response = parts(prompt)
    verdict = outcome(claim, response)
    seen[prompt] = seen.get(prompt, 0) + 1
    if verdict == "retry-then-fulfilled":
        if seen[prompt] == 1:
            return "I think it is fulfilled."  # not JSON: upstream's json.loads fails and tenacity retries
        verdict = "fulfilled"
    return json.dumps(
        {
            "claim_text": claim,
            "coverage_outcome": verdict,
            "justification": f"scripted: {verdict}",
            "confidence_level": 0.5 + len(claim) % 5 / 10,
        }
    )
