"""LLM judges for web trajectories, as Inspect scorers with the model role "judge".

`webvoyager_judge` (WebVoyager / Fara-595) and `webjudge` (Online-Mind2Web's WebJudge), each with a
text-only variant for judges that cannot see images (ARIA + OCR, marked "not comparable"). `JUDGES`
names them for `judge_scorers("webvoyager,webjudge-text")`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from inspect_ai.scorer import Scorer

from forge_eval._registry import Registry
from forge_eval.benchmarks.web.judges._common import JUDGE_CONFIG, JUDGE_ROLE, JudgeView, prompt_sha256
from forge_eval.benchmarks.web.judges._ocr import ocr, ocr_available
from forge_eval.benchmarks.web.judges._webjudge import PROMPT_SHA256 as WEBJUDGE_PROMPT_SHA256
from forge_eval.benchmarks.web.judges._webjudge import (
    keep_screenshots,
    parse_relevance,
    parse_status,
    webjudge,
)
from forge_eval.benchmarks.web.judges._webvoyager import PROMPT_SHA256 as WEBVOYAGER_PROMPT_SHA256
from forge_eval.benchmarks.web.judges._webvoyager import parse_verdict, webvoyager_judge
from forge_eval.harnesses import is_text_only

JUDGES: Registry[Callable[[], Scorer]] = Registry("web judge")
JUDGES.register("webvoyager", lambda: webvoyager_judge())
JUDGES.register("webvoyager-text", lambda: webvoyager_judge(text=True))
JUDGES.register("webjudge", lambda: webjudge())
JUDGES.register("webjudge-text", lambda: webjudge(text=True))

PROMPT_HASHES = {"webvoyager": WEBVOYAGER_PROMPT_SHA256, "webjudge": WEBJUDGE_PROMPT_SHA256}


def judge_scorers(names: str) -> list[Scorer]:
    """Scorers for a comma-separated list of judge names ('' = none)."""
    return [JUDGES.get(n.strip())() for n in names.split(",") if n.strip()]


def judge_info(judge: str, judge_model: str, official_model: str | None) -> dict[str, Any]:
    """What identifies a judge setup in results.json: prompt hash, settings, comparability."""
    text = is_text_only(judge_model)
    info: dict[str, Any] = {
        "judge": judge,
        "prompt_sha256": PROMPT_HASHES[judge],
        "settings": JUDGE_CONFIG.model_dump(exclude_none=True),
        "variant": "text" if text else "vision",
        "max_images": 50 if judge == "webjudge" else 30,
    }
    notes = []
    if text:
        notes.append("the judge model cannot see images: text-only variant (ARIA + OCR)")
    if official_model and judge_model != official_model:
        notes.append(f"the official judge is {official_model}")
    info["comparable"] = not notes
    if notes:
        info["note"] = "; ".join(notes)
    return info


__all__ = [
    "JUDGES",
    "JUDGE_CONFIG",
    "JUDGE_ROLE",
    "PROMPT_HASHES",
    "JudgeView",
    "judge_info",
    "judge_scorers",
    "keep_screenshots",
    "ocr",
    "ocr_available",
    "parse_relevance",
    "parse_status",
    "parse_verdict",
    "prompt_sha256",
    "webjudge",
    "webvoyager_judge",
]
