"""WebJudge (Online-Mind2Web), run as upstream's own code from Fara's Online-Mind2Web engine.

`WebJudge_Online_Mind2Web_eval` (its methods/webjudge_online_mind2web.py) asks the judge for the task's
key points, rates every screenshot 1-5 for them and builds the outcome messages from the task, the key
points, the action history and the first 50 screenshots rated >= 3 (`detail: high`); it gets no final
response, and the action history leaves out the final answer step, as upstream's runners pass it. The
outcome call and its verdict are those of its run.py: `extract_predication` of its utils.py.

The judge is the Inspect role "judge". Settings are those of upstream's engine (`OpenaiEngine.generate`:
its reply cap and temperature), except that an o-series (reasoning) judge gets a reply budget of at
least 2048 tokens, which its hidden reasoning shares, and no temperature (they take none). A verdict
call that returns nothing (the budget spent before the answer) is a judge error: the sample ends with
that error instead of a score, since the agent did not fail.
"""

from __future__ import annotations

import inspect
import re
import tempfile
from pathlib import Path
from types import ModuleType
from typing import Any

from inspect_ai.model import GenerateConfig, Model, get_model
from inspect_ai.scorer import Score, Scorer, Target, accuracy, scorer, stderr
from inspect_ai.solver import TaskState
from PIL import Image

from forge_eval.benchmarks.web._binding import current_env
from forge_eval.benchmarks.web._trajectory import Step, Trajectory
from forge_eval.benchmarks.web._upstream import FARA_TREE, locate_tree
from forge_eval.benchmarks.web.judges._common import (
    JUDGE_ROLE,
    JudgeError,
    JudgeView,
    all_steps,
    judge_metadata,
    resolve_view,
)
from forge_eval.harnesses import to_inspect
from forge_eval.rundir import sha256_files
from forge_eval.upstream import load_module

_SRC = "webeval/src/webeval/benchmarks/om2w/impl/src"
JUDGE_FILE = f"{_SRC}/methods/webjudge_online_mind2web.py"
UTILS_FILE = f"{_SRC}/utils.py"
#: The name upstream's judge module imports its utils by.
UTILS_MODULE = "webeval.benchmarks.om2w.impl.src.utils"
#: run.py's `--mode` for this judge (its verdict rule in `extract_predication`).
MODE = "WebJudge_Online_Mind2Web_eval"
#: run.py's `--score_threshold` default: screenshots rated at least this are kept.
SCORE_THRESHOLD = 3
#: The least reply budget of an o-series judge (its reasoning tokens count against it).
REASONING_MAX_TOKENS = 2048
#: The action that ends an episode with the answer; upstream's history does not include it.
ANSWER_ACTION = "send_msg_to_user"
_REASONING = re.compile(r"(^|/)o\d")


def judge_modules(tree: Path) -> tuple[ModuleType, ModuleType]:
    """Upstream's WebJudge module and its utils (engine defaults, image encoding, verdict rule)."""
    utils = load_module(tree / UTILS_FILE, extra="web")
    methods = load_module(tree / JUDGE_FILE, ((UTILS_MODULE, tree / UTILS_FILE),), extra="web")
    return methods, utils


def is_reasoning(model_name: str) -> bool:
    """Whether a judge is an o-series model (o1, o3, o4-mini, ...): hidden reasoning, no temperature."""
    return bool(_REASONING.search(model_name))


def judge_config(utils: ModuleType, model_name: str) -> GenerateConfig:
    """Upstream's engine settings (`OpenaiEngine.generate` defaults), with an o-series judge's budget."""
    defaults = inspect.signature(utils.OpenaiEngine.generate).parameters
    max_tokens, temperature = defaults["max_new_tokens"].default, defaults["temperature"].default
    if is_reasoning(model_name):
        return GenerateConfig(max_tokens=max(max_tokens, REASONING_MAX_TOKENS))
    return GenerateConfig(max_tokens=max_tokens, temperature=temperature)


def action_history(trajectory: Trajectory) -> list[str]:
    """The action history upstream's judge is given: every step but the final answer."""
    lines = trajectory.action_history()
    if trajectory.steps and trajectory.steps[-1].action.get("name") == ANSWER_ACTION:
        lines = lines[:-1]
    return lines


class InspectEngine:
    """The model object upstream's judge calls (`await model.agenerate(messages)` -> replies), answered
    by an Inspect model; keeps every reply."""

    def __init__(self, model: Model, config: GenerateConfig, view: JudgeView, renderings: dict[str, Step]):
        self.model, self.config, self.view, self.renderings = model, config, view, renderings
        self.calls: list[tuple[list[dict[str, Any]], str]] = []

    def _image(self, url: str, detail: str) -> list[Any]:
        return self.view.screenshot(self.renderings[url.split(",", 1)[1]], "Screenshot:")

    async def agenerate(self, messages: list[dict[str, Any]], **_: Any) -> list[str]:
        chat = to_inspect(messages, self._image if self.view.text else None)
        output = await self.model.generate(chat, config=self.config)
        self.calls.append((messages, output.completion))
        return [output.completion]


async def run_webjudge(
    tree: Path, model: Model, view: JudgeView, task: str, history: list[str], steps: list[Step]
) -> tuple[int, dict[str, Any], InspectEngine]:
    """Upstream's WebJudge on an episode: its verdict (1 or 0), what it recorded, and the engine.

    Raises:
        JudgeError: the verdict call returned nothing (the judge's budget ran out before its answer).
    """
    methods, utils = judge_modules(tree)
    config = judge_config(utils, str(model))
    with tempfile.TemporaryDirectory(prefix="webjudge-") as folder:
        paths = []
        for n, step in enumerate(steps):
            path = Path(folder) / f"{n}_full_screenshot.png"
            path.write_bytes(step.screenshot)
            paths.append(str(path))
        renderings = {}
        if view.text:  # upstream re-encodes each screenshot; its encoding names the step in its messages
            renderings = {utils.encode_image(Image.open(p)): s for p, s in zip(paths, steps, strict=True)}
        engine = InspectEngine(model, config, view, renderings)
        messages, _text, _system, record, key_points = await methods.WebJudge_Online_Mind2Web_eval(
            task, history, paths, engine, SCORE_THRESHOLD
        )
    output = await model.generate(to_inspect(messages, engine._image if view.text else None), config=config)
    response = output.completion
    engine.calls.append((messages, response))
    if not response.strip():
        raise JudgeError(
            f"the WebJudge verdict call to {model} returned no text (stop reason: {output.stop_reason}, "
            f"reply budget {config.max_tokens} tokens)",
            hint="give the judge a larger budget or use a judge that answers within it; the sample's "
            "trajectory is kept in the log and can be scored again",
        )
    verdict = int(utils.extract_predication(response, MODE))
    return verdict, {"key_points": key_points, "record": record, "response": response}, engine


@scorer(metrics=[accuracy(), stderr()])
def webjudge(text: bool = False, ocr: bool = True, upstream_dir: str | None = None) -> Scorer:
    """WebJudge as a scorer; the judge model is the Inspect role "judge".

    Args:
        text: Use the text-only variant (ARIA + OCR instead of images; "not comparable").
        ocr: In the text variant, add tesseract's reading of each screenshot.
        upstream_dir: Where the pinned Fara tree is (default: the cache, else downloaded).
    """
    tree = locate_tree(FARA_TREE, upstream_dir)

    async def score(state: TaskState, target: Target) -> Score:
        trajectory = current_env().trajectory
        model = get_model(role=JUDGE_ROLE)
        view = resolve_view(text, model, ocr)
        steps = all_steps(trajectory)
        verdict, found, engine = await run_webjudge(
            tree, model, view, trajectory.task, action_history(trajectory), steps
        )
        relevance = [r["Score"] for r in found["record"]]
        kept = sum(1 for r in relevance if r >= SCORE_THRESHOLD)
        return Score(
            value=float(verdict),
            answer=trajectory.final_response,
            explanation=found["response"],
            metadata=judge_metadata(
                "webjudge",
                model,
                view,
                min(kept, methods_max_images(tree)),
                key_points=found["key_points"],
                relevance=relevance,
                prompt_sha256=prompt_sha256(tree),
            ),
        )

    return score


def methods_max_images(tree: Path) -> int:
    """Upstream's cap on the screenshots the outcome call sees (`MAX_IMAGE`)."""
    return int(judge_modules(tree)[0].MAX_IMAGE)


def settings(tree: Path) -> dict[str, Any]:
    """The judge's settings a record shows (the same in every tree)."""
    return {"score_threshold": SCORE_THRESHOLD, "mode": MODE}


def prompt_sha256(tree: Path) -> str:
    """Identifies the judge's prompts: upstream's judge module and utils (prompts, construction, verdict)."""
    return sha256_files([tree / JUDGE_FILE, tree / UTILS_FILE])
