"""Claw-Eval's LLM judge: upstream's own (`graders/llm_judge.py` and the judge calls in each task's
`grader.py`), read from the pinned tree at run time, its model bound to the Inspect role `judge`.

Upstream's graders call the judge through an OpenAI client at temperature 0; forge-eval gives that client
a recording proxy whose upstream is the judge role's model (`_trial.py`). Nothing of the prompts is here.
"""

from __future__ import annotations

from forge_eval.benchmarks._judge import JudgeSetup

#: Upstream's judge model for the general and multimodal splits (`config_general.yaml`).
OFFICIAL_JUDGE = "openrouter/google/gemini-3-flash-preview"

JUDGE = JudgeSetup(
    prompts=(),
    origin="upstream's (graders/llm_judge.py and each task's grader.py, read from the pinned tree)",
    settings={"calls": "as each task's grader.py makes them"},
)
