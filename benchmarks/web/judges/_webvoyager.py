"""WebVoyager's LLM judge, run as upstream's own `auto_eval_by_gpt4v` (evaluation/auto_eval.py).

The episode is written as WebVoyager's results folder (`interact_messages.json` with the task and the
`ANSWER` action it parses, `screenshot<N>.png`), and upstream's function reads it, builds the prompt and
the messages, asks the judge (the Inspect role "judge", through a client with the OpenAI client's shape)
with its own settings (reply cap, seed, temperature) and decides by its own test ("NOT SUCCESS" in the
reply is 0, else "SUCCESS" is 1, neither is no verdict). How many screenshots it attaches is its
evaluation script's `--max_attached_imgs` (evaluation/run_eval.sh).
"""

from __future__ import annotations

import base64
import copy
import functools
import json
import re
import tempfile
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import anyio
import anyio.from_thread
from inspect_ai.model import GenerateConfig, Model, get_model
from inspect_ai.scorer import Score, Scorer, Target, accuracy, scorer, stderr
from inspect_ai.solver import TaskState

from forge_eval._errors import ForgeError
from forge_eval.benchmarks.web._binding import current_env
from forge_eval.benchmarks.web._trajectory import Step
from forge_eval.benchmarks.web._upstream import WEBVOYAGER_TREE, locate_tree
from forge_eval.benchmarks.web.judges._common import (
    JUDGE_ROLE,
    JudgeView,
    all_steps,
    judge_metadata,
    resolve_view,
)
from forge_eval.harnesses import to_inspect
from forge_eval.rundir import sha256_text
from forge_eval.upstream import load_module

JUDGE_FILE = "evaluation/auto_eval.py"
SCRIPT_FILE = "evaluation/run_eval.sh"
#: The text variant's renderings are long (ARIA + OCR, ~1k tokens each): it attaches only the last 3.
TEXT_LAST_SCREENSHOTS = 3


class _JudgeCallFailed(BaseException):
    """Carries the judge model's error out of upstream's retry loop (which retries every `Exception`
    forever): a BaseException passes through it."""

    def __init__(self, error: BaseException) -> None:
        self.error = error


def judge_module(tree: Path) -> ModuleType:
    return load_module(tree / JUDGE_FILE, extra="web")


def attached_screenshots(tree: Path) -> int:
    """How many of the last screenshots upstream's evaluation script attaches (`--max_attached_imgs`)."""
    script = (tree / SCRIPT_FILE).read_text(encoding="utf-8")
    found = re.search(r"--max_attached_imgs\s+(\d+)", script)
    if not found:
        raise ForgeError(f"{tree / SCRIPT_FILE} sets no --max_attached_imgs", hint="check the pinned tree")
    return int(found.group(1))


def results_format(module: ModuleType) -> tuple[str, str, str]:
    """What `auto_eval_by_gpt4v` parses in a results folder, read from its own code: the text before and
    after the task in the first user message, and the marker of the answer action in the last message."""
    texts = [c for c in module.auto_eval_by_gpt4v.__code__.co_consts if isinstance(c, str)]
    task_pattern = next((c for c in texts if "(.+?)" in c), None)
    answer_marker = next((c for c in texts if c.startswith("Action: ")), None)
    if task_pattern is None or answer_marker is None:
        raise ForgeError(
            f"{JUDGE_FILE} of the WebVoyager tree parses no task or answer this adapter knows",
            hint="point -T upstream_dir at a clone of MinorJerry/WebVoyager at its pinned commit",
        )
    before, after = task_pattern.split("(.+?)", 1)
    return before, after, answer_marker


def write_results_folder(folder: Path, module: ModuleType, task: str, answer: str, steps: list[Step]) -> None:
    """The episode as WebVoyager's results folder, as far as `auto_eval_by_gpt4v` reads it: the task in
    the first user message, the answer action in the last message (both in the form its own parser reads,
    `results_format`), and the screenshots as `screenshot<N>.png` from 1."""
    before, after, answer_marker = results_format(module)
    messages = [
        {"role": "system", "content": ""},
        {"role": "user", "content": f"{before} {task} {after}"},
        {"role": "assistant", "content": f"{answer_marker}; [{answer}]"},
    ]
    (folder / "interact_messages.json").write_text(json.dumps(messages), encoding="utf-8")
    for n, step in enumerate(steps, start=1):
        (folder / f"screenshot{n}.png").write_bytes(step.screenshot)


def judged_answer(final_response: str) -> str:
    """The answer as MolmoWeb's runner passes it to this judge: without the `[ANSWER]` tag its agent
    puts before an answer (upstream's ANSWER parser would read the tag's bracket as the answer's)."""
    tag = "[ANSWER]"
    return final_response.split(tag, 1)[1].strip() if tag in final_response else final_response


class InspectClient:
    """What `auto_eval_by_gpt4v` calls as `openai_client.chat.completions.create(...)`, answered by an
    Inspect model from the worker thread upstream's function runs in; keeps what it sent and got."""

    def __init__(self, model: Model, view: JudgeView, renderings: dict[str, Step]) -> None:
        self.model, self.view, self.renderings = model, view, renderings
        self.sent: list[dict[str, Any]] = []
        self.reply: str | None = None
        self.chat = SimpleNamespace(completions=SimpleNamespace(create=self._create))

    def _image(self, url: str, detail: str) -> list[Any]:
        step = self.renderings[url.split(",", 1)[1]]
        return self.view.screenshot(step, "Screenshot:")

    def _create(self, *, model: str, messages: list[dict[str, Any]], **settings: Any) -> Any:
        self.sent = copy.deepcopy(messages)  # upstream blanks the images in them after the call
        config = GenerateConfig(
            max_tokens=settings.get("max_tokens"),
            seed=settings.get("seed"),
            temperature=settings.get("temperature"),
        )
        chat = to_inspect(messages, self._image if self.view.text else None)
        try:
            output = anyio.from_thread.run(functools.partial(self.model.generate, chat, config=config))
        except Exception as e:
            raise _JudgeCallFailed(e) from e
        self.reply = output.completion
        usage = output.usage
        return SimpleNamespace(
            choices=[SimpleNamespace(message=SimpleNamespace(content=output.completion))],
            usage=SimpleNamespace(
                prompt_tokens=usage.input_tokens if usage else 0,
                completion_tokens=usage.output_tokens if usage else 0,
            ),
        )


async def run_auto_eval(
    tree: Path,
    model: Model,
    view: JudgeView,
    task: str,
    answer: str,
    steps: list[Step],
    img_num: int,
) -> tuple[int | None, InspectClient]:
    """Upstream's verdict (1, 0, or None without one) for the episode, and the client that asked."""
    module = judge_module(tree)
    renderings = {base64.b64encode(s.screenshot).decode(): s for s in steps}
    client = InspectClient(model, view, renderings)
    with tempfile.TemporaryDirectory(prefix="webvoyager-judge-") as folder:
        write_results_folder(Path(folder), module, task, answer, steps)
        try:
            verdict = await anyio.to_thread.run_sync(
                module.auto_eval_by_gpt4v, folder, client, str(model), img_num
            )
        except _JudgeCallFailed as failed:
            raise failed.error from None
    return verdict, client


@scorer(metrics=[accuracy(), stderr()])
def webvoyager_judge(
    text: bool = False, ocr: bool = True, last: int | None = None, upstream_dir: str | None = None
) -> Scorer:
    """WebVoyager's judge as a scorer; the judge model is the Inspect role "judge".

    Args:
        text: Use the text-only variant (ARIA + OCR instead of images; "not comparable").
        ocr: In the text variant, add tesseract's reading of each screenshot.
        last: How many of the last screenshots the judge sees (default: upstream's evaluation script's;
            the text variant: at most 3).
        upstream_dir: Where the pinned WebVoyager tree is (default: the cache, else downloaded).
    """
    tree = locate_tree(WEBVOYAGER_TREE, upstream_dir)
    attach = last if last is not None else attached_screenshots(tree)

    async def score(state: TaskState, target: Target) -> Score:
        trajectory = current_env().trajectory
        model = get_model(role=JUDGE_ROLE)
        view = resolve_view(text, model, ocr)
        img_num = min(attach, TEXT_LAST_SCREENSHOTS) if view.text else attach
        question = state.metadata.get("question") or trajectory.task
        steps = all_steps(trajectory)
        answer = judged_answer(trajectory.final_response)
        verdict, client = await run_auto_eval(tree, model, view, question, answer, steps, img_num)
        return Score(
            value=1.0 if verdict == 1 else 0.0,
            answer=trajectory.final_response,
            explanation=client.reply,
            metadata=judge_metadata(
                "webvoyager",
                model,
                view,
                min(img_num, len(steps)),
                parsed=verdict is not None,
                prompt_sha256=prompt_sha256(tree),
            ),
        )

    return score


def settings(tree: Path) -> dict[str, Any]:
    """The judge's settings a record shows: how many screenshots upstream attaches."""
    return {"max_attached_imgs": attached_screenshots(tree)}


def prompt_sha256(tree: Path) -> str:
    """Identifies the judge's prompts: the sha256 of upstream's file that holds and builds them."""
    return sha256_text((tree / JUDGE_FILE).read_bytes())
