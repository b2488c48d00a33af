"""Online-Mind2Web's scorer: WebJudge (key points, each screenshot's relevance, outcome)."""

from __future__ import annotations

from inspect_ai.scorer import Scorer

from forge_eval.benchmarks.web.judges import webjudge


def online_mind2web_scorer(judge_text: bool = False, upstream_dir: str | None = None) -> Scorer:
    """WebJudge as a scorer (`judge_text`: from ARIA + OCR text instead of screenshots, not comparable);
    `upstream_dir`: where the pinned upstream trees are (default: the cache, else downloaded)."""
    return webjudge(text=judge_text, upstream_dir=upstream_dir)
