"""QwenClawBench's LLM judge: upstream's own, called from the pinned tree; only its model is ours to bind.

Upstream's `grade_task` (`scripts/lib_grading.py`) builds the judge prompt (`_build_judge_prompt`)
from its transcript summary (`_summarize_transcript`) and the task's rubric, calls an OpenAI-compatible
API at temperature 0 with max_tokens 20480, retries (`JUDGE_API_MAX_RETRIES`, exponential backoff) and
falls back to an OpenClaw agent as judge. All of it runs as upstream wrote it (`_upstream.grade_run`);
the API it calls answers with the model bound to Inspect's `judge` role (default: upstream's judge).
"""

from __future__ import annotations

from forge_eval.benchmarks._judge import JudgeSetup
from forge_eval.benchmarks.qwenclawbench._upstream import GRADING_FILE, REPO

#: Upstream's default judge (`DEFAULT_JUDGE_MODEL` of its lib_grading.py), as an Inspect model name.
OFFICIAL_JUDGE = "anthropic/claude-opus-4-5-20251101"
#: The reply cap upstream's judge request sends.
JUDGE_MAX_TOKENS = 20480

JUDGE = JudgeSetup(
    prompts=(),
    origin=f"upstream's _build_judge_prompt and _summarize_transcript ({REPO}:{GRADING_FILE}), read from "
    "the pinned tree at run time",
    max_tokens=JUDGE_MAX_TOKENS,
    settings={
        "gate": "hybrid: s_auto >= 0.75 or the judge's share is 0 (upstream's default scoring)",
        "retries": "upstream's JUDGE_API_MAX_RETRIES with exponential backoff, then its OpenClaw fallback",
    },
)
