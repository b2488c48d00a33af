"""WebVoyager's scorer: its LLM judge (task, final answer, last screenshots -> SUCCESS / NOT SUCCESS)."""

from __future__ import annotations

from inspect_ai.scorer import Scorer

from forge_eval.benchmarks.web.judges import webvoyager_judge


def webvoyager_scorer(judge_text: bool = False, upstream_dir: str | None = None) -> Scorer:
    """The judge as a scorer (`judge_text`: from ARIA + OCR text instead of screenshots, not comparable);
    `upstream_dir`: where the pinned upstream trees are (default: the cache, else downloaded)."""
    return webvoyager_judge(text=judge_text, upstream_dir=upstream_dir)
