"""The per-claim judge prompt: our wording of upstream's rules (3 outcomes, numeric tolerance)."""

from __future__ import annotations

from forge_eval.benchmarks._judge import JudgeSetup

OFFICIAL_JUDGE = "google/gemini-2.5-pro"

CLAIM_PROMPT = """\
Decide whether an AI assistant's final answer covers one expected claim.

Outcomes:
- fulfilled: the answer states the claim completely and correctly, with all its key details.
- partially_fulfilled: the answer states some of the claim's key details but not all.
- not_fulfilled: the answer states none of the claim's key details (or contradicts them).

Numbers: a value within 5% of the claimed number matches; for percentages, within 1 percentage point \
matches. Wording and formatting differences do not matter.

Claim: {claim}

Answer:
{response}

Reply with JSON: {{"claim_text": "<the claim>", "coverage_outcome": "fulfilled" | "partially_fulfilled" | \
"not_fulfilled", "justification": "<one sentence>", "confidence_level": <0 to 1>}}"""

JUDGE = JudgeSetup(
    prompts=(CLAIM_PROMPT,),
    origin="ours: a shortened paraphrase of upstream's _get_single_claim_evaluation_prompt",
    settings={"calls": "one per claim"},
)


def claim_prompt(claim: str, response: str) -> str:
    return CLAIM_PROMPT.format(claim=claim, response=response)
