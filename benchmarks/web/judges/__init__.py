"""LLM judges for web trajectories, as Inspect scorers with the model role "judge".

`webvoyager_judge` (WebVoyager's `auto_eval_by_gpt4v`) and `webjudge` (Online-Mind2Web's WebJudge) run
upstream's own code from the pinned trees, each with a text-only variant for judges that cannot see
images (ARIA + OCR instead of each image, marked "not comparable"). `JUDGES` names them for
`judge_scorers("webvoyager,webjudge-text")`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from inspect_ai.scorer import Scorer

from forge_eval._registry import Registry
from forge_eval.benchmarks.web._upstream import FARA_TREE, WEBVOYAGER_TREE, locate_tree
from forge_eval.benchmarks.web.judges import _webjudge, _webvoyager
from forge_eval.benchmarks.web.judges._common import JUDGE_ROLE, JudgeError, JudgeView
from forge_eval.benchmarks.web.judges._ocr import ocr, ocr_available
from forge_eval.benchmarks.web.judges._webjudge import (
    action_history,
    is_reasoning,
    judge_config,
    run_webjudge,
    webjudge,
)
from forge_eval.benchmarks.web.judges._webvoyager import run_auto_eval, webvoyager_judge
from forge_eval.harnesses import is_text_only

JUDGES: Registry[Callable[..., Scorer]] = Registry("web judge")
JUDGES.register("webvoyager", lambda **o: webvoyager_judge(**o))
JUDGES.register("webvoyager-text", lambda **o: webvoyager_judge(text=True, **o))
JUDGES.register("webjudge", lambda **o: webjudge(**o))
JUDGES.register("webjudge-text", lambda **o: webjudge(text=True, **o))


def judge_scorers(names: str, upstream_dir: str | None = None) -> list[Scorer]:
    """Scorers for a comma-separated list of judge names ('' = none), reading upstream's trees from
    `upstream_dir` (default: the cache, else downloaded)."""
    return [JUDGES.get(n.strip())(upstream_dir=upstream_dir) for n in names.split(",") if n.strip()]


#: Each judge's upstream tree, its module here (the judge's file, prompt hash, settings) and the upstream
#: function that judges.
_SOURCES = {
    "webvoyager": (WEBVOYAGER_TREE, _webvoyager, "auto_eval_by_gpt4v"),
    "webjudge": (FARA_TREE, _webjudge, _webjudge.MODE),
}


def judge_source(judge: str, upstream_dir: str | None = None) -> dict[str, Any]:
    """Where a judge's prompts come from: the upstream tree, the files, and their sha256."""
    pin, module, symbol = _SOURCES["webvoyager" if judge == "webvoyager" else "webjudge"]
    tree = locate_tree(pin, upstream_dir)
    return {
        "tree": tree,
        "repo": pin.repo,
        "commit": pin.revision,
        "path": module.JUDGE_FILE,
        "symbol": symbol,
        "sha256": module.prompt_sha256(tree),
        "settings": module.settings(tree),
    }


def judge_info(judge: str, judge_model: str, official_model: str | None) -> dict[str, Any]:
    """What identifies a judge setup in results.json: prompt hash, settings, comparability."""
    text = is_text_only(judge_model)
    source = judge_source(judge)
    settings = dict(source["settings"])
    if judge == "webjudge":
        _, utils = _webjudge.judge_modules(source["tree"])
        settings.update(judge_config(utils, judge_model).model_dump(exclude_none=True))
    info: dict[str, Any] = {
        "judge": judge,
        "prompt_sha256": source["sha256"],
        "prompts": f"upstream's: {source['repo']}@{source['commit']}:{source['path']} ({source['symbol']})",
        "settings": settings,
        "variant": "text" if text else "vision",
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
    "JUDGE_ROLE",
    "JudgeError",
    "JudgeView",
    "action_history",
    "is_reasoning",
    "judge_config",
    "judge_info",
    "judge_scorers",
    "judge_source",
    "ocr",
    "ocr_available",
    "run_auto_eval",
    "run_webjudge",
    "webjudge",
    "webvoyager_judge",
]
