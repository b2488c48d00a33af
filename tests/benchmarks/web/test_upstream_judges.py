"""The web judges send what upstream's own code builds, and decide as upstream's code decides.

Each test builds the upstream side independently: it writes the episode in upstream's own input format,
calls upstream's function from the pinned tree with a client that records what it would send, and
compares that with what our scorer's judge model received (texts and images, part for part).
"""

from __future__ import annotations

import asyncio
import base64
import copy
import io
import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import Sample
from inspect_ai.model import (
    ChatMessage,
    ChatMessageSystem,
    ContentImage,
    ContentText,
    GenerateConfig,
    ModelOutput,
    get_model,
)
from inspect_ai.solver import Generate, TaskState, solver
from PIL import Image

from forge_eval.benchmarks.web import bind_env
from forge_eval.benchmarks.web._trajectory import Step, Trajectory
from forge_eval.benchmarks.web._upstream import FARA_TREE, WEBVOYAGER_TREE, locate_tree
from forge_eval.benchmarks.web.judges import (
    JudgeError,
    JudgeView,
    _webjudge,
    _webvoyager,
    action_history,
    run_auto_eval,
    run_webjudge,
    webjudge,
)
from forge_eval.upstream import load_module
from tests.benchmarks.web._scripted import reply


def png(red: int) -> bytes:
    """A small screenshot whose colour names it (JPEG keeps a flat colour within a step or two)."""
    buffer = io.BytesIO()
    Image.new("RGB", (64, 36), (red, 40, 90)).save(buffer, format="PNG")
    return buffer.getvalue()


def trajectory(n_steps: int, answer: str) -> Trajectory:
    steps = [
        Step(
            action={"name": "mouse_click", "x": 10 + i, "y": 20},
            url=f"https://a.test/{i}",
            title="A",
            screenshot=png(3 * (i + 1)),
            thought=f"step {i}",
        )
        for i in range(n_steps - 1)
    ]
    steps.append(
        Step(
            action={"name": "send_msg_to_user", "msg": answer},
            url="https://a.test/end",
            title="A",
            screenshot=png(3 * n_steps),
            thought="done",
        )
    )
    return Trajectory(
        task="Find the price of the blue kettle",
        start_url="https://a.test/",
        steps=steps,
        initial=Step(action={}, url="https://a.test/", title="A", screenshot=png(0)),
        answer=answer,
    )


def normalized(messages: list[dict[str, Any]] | list[ChatMessage]) -> list[tuple[str, list[tuple[str, ...]]]]:
    """Messages as (role, parts) with text parts and image URLs with their detail: the two sides are
    compared in one shape (upstream's dicts; Inspect's messages as our scorer sent them)."""
    out = []
    for m in messages:
        if isinstance(m, dict):
            content = m["content"]
            parts = (
                [("text", content)]
                if isinstance(content, str)
                else [
                    ("text", p["text"])
                    if p["type"] == "text"
                    else ("image", p["image_url"]["url"], p["image_url"].get("detail", "auto"))
                    for p in content
                ]
            )
            out.append((m["role"], parts))
        else:
            content = m.content
            parts = (
                [("text", content)]
                if isinstance(content, str)
                else [
                    ("text", c.text) if isinstance(c, ContentText) else ("image", c.image, c.detail)
                    for c in content
                    if isinstance(c, ContentText | ContentImage)
                ]
            )
            out.append((m.role, parts))
    return out


class Recorder:
    """A scripted judge model: answers with `answer(messages, config)`, records every call."""

    def __init__(self, answer: Any) -> None:
        self.answer = answer
        self.calls: list[tuple[list[ChatMessage], GenerateConfig]] = []

    def __call__(
        self, input: list[ChatMessage], tools: Any, tool_choice: Any, config: GenerateConfig
    ) -> ModelOutput:
        self.calls.append((input, config))
        return self.answer(input, config)


# --- WebVoyager ---------------------------------------------------------------------------------------


class CapturingClient:
    """The OpenAI client upstream's auto_eval calls, recording the request it would send."""

    def __init__(self, reply_text: str) -> None:
        self.requests: list[dict[str, Any]] = []
        self.reply_text = reply_text
        completions = type("C", (), {"create": self._create})
        self.chat = type("Chat", (), {"completions": completions()})()

    def _create(self, *_: Any, **request: Any) -> Any:
        self.requests.append(copy.deepcopy(request))  # upstream blanks the images once it has sent them
        message = type("M", (), {"content": self.reply_text})()
        usage = type("U", (), {"prompt_tokens": 1, "completion_tokens": 1})()
        return type("R", (), {"choices": [type("Ch", (), {"message": message})()], "usage": usage})()


def upstream_webvoyager_request(tree: Path, traj: Trajectory, question: str, img_num: int) -> dict[str, Any]:
    """What upstream's auto_eval_by_gpt4v sends for this episode, written as WebVoyager's agent writes
    its results folder (task message, ANSWER action, screenshot<N>.png)."""
    module = load_module(tree / _webvoyager.JUDGE_FILE, extra="web")
    with tempfile.TemporaryDirectory() as folder:
        before, after, answer_marker = _webvoyager.results_format(module)
        msgs = [
            {"role": "system", "content": "(agent prompt)"},
            {
                "role": "user",
                "content": [{"type": "text", "text": f"{before} {question}  {after} a.test.\n"}],
            },
            {"role": "assistant", "content": f"Thought: found it.\n{answer_marker}; [{traj.answer}]"},
        ]
        Path(folder, "interact_messages.json").write_text(json.dumps(msgs))
        screenshots = [traj.initial.screenshot] + [s.screenshot for s in traj.steps]  # type: ignore[union-attr]
        for n, shot in enumerate(screenshots, start=1):
            Path(folder, f"screenshot{n}.png").write_bytes(shot)
        client = CapturingClient("SUCCESS")
        module.auto_eval_by_gpt4v(folder, client, "gpt-4o", img_num)
    (request,) = client.requests
    return request


def page_texts(traj: Trajectory) -> list[Step]:
    """Every screenshot of `traj` with a page text naming its place ("page 0" the first)."""
    steps = [s for s in (traj.initial, *traj.steps) if s is not None]
    for n, step in enumerate(steps):
        step.aria = f'- heading "page {n}"'
    return steps


def test_webvoyager_judge_sends_upstreams_request_byte_for_byte(upstream_trees: Path) -> None:
    tree = locate_tree(WEBVOYAGER_TREE, upstream_trees)
    traj = trajectory(20, "The blue kettle costs $24.99")
    img_num = _webvoyager.attached_screenshots(tree)
    assert img_num == 15  # evaluation/run_eval.sh: --max_attached_imgs 15

    judge = Recorder(lambda messages, config: reply("The screenshots show the kettle. SUCCESS"))
    model = get_model("mockllm/judge", custom_outputs=judge)
    steps = [traj.initial, *traj.steps]
    verdict, _ = asyncio.run(
        run_auto_eval(
            tree,
            model,
            JudgeView(text=False),
            traj.task,
            traj.final_response,
            steps,
            img_num,
        )
    )
    assert verdict == 1
    ((sent, config),) = judge.calls
    expected = upstream_webvoyager_request(tree, traj, traj.task, img_num)
    assert normalized(sent) == normalized(expected["messages"])
    assert (
        isinstance(sent[0], ChatMessageSystem)
        and sent[0].text == load_module(tree / _webvoyager.JUDGE_FILE, extra="web").SYSTEM_PROMPT
    )
    images = [p for p in normalized(sent)[1][1] if p[0] == "image"]
    assert (
        len(images) == 15
        and images[-1][1] == "data:image/png;base64," + base64.b64encode(steps[-1].screenshot).decode()
    )
    # upstream's own call settings: reply cap 1000, seed 42, temperature 0
    assert (config.max_tokens, config.seed, config.temperature) == (1000, 42, 0)
    assert expected["max_tokens"] == 1000


@pytest.mark.parametrize(
    ("reply_text", "verdict"),
    [
        ("The response states the price; the screenshots do not contradict it. SUCCESS", 1),
        ("The screenshots show a different price. NOT SUCCESS", 0),
        ("I cannot tell.", None),
    ],
)
def test_webvoyager_verdict_is_upstreams_test(
    upstream_trees: Path, reply_text: str, verdict: int | None
) -> None:
    """A response-only answer (no screenshot shows the price) reaches the judge with upstream's rule 2,
    which tells it to believe the response; the verdict is upstream's "NOT SUCCESS" / "SUCCESS" test."""
    tree = locate_tree(WEBVOYAGER_TREE, upstream_trees)
    system = load_module(tree / _webvoyager.JUDGE_FILE, extra="web").SYSTEM_PROMPT
    assert (
        "2) The content in the Result response is not mentioned on the screenshot, choose to believe"
        in system
    )

    def believes_the_response(messages: list[ChatMessage], config: GenerateConfig) -> ModelOutput:
        user = messages[1].text
        assert "$24.99" in user  # the answer is shown, though no screenshot holds it
        return reply(reply_text)

    traj = trajectory(3, "The blue kettle costs $24.99")
    model = get_model("mockllm/judge", custom_outputs=Recorder(believes_the_response))
    steps = [traj.initial, *traj.steps]
    got, client = asyncio.run(
        run_auto_eval(tree, model, JudgeView(text=False), traj.task, traj.final_response, steps, 15)
    )
    assert got == verdict and client.reply == reply_text


@pytest.mark.timeout(60)
def test_webvoyager_judge_error_is_raised_not_retried_forever(upstream_trees: Path) -> None:
    """Upstream retries every Exception in a loop; a failing judge model must end the call instead."""
    tree = locate_tree(WEBVOYAGER_TREE, upstream_trees)

    def broken(messages: list[ChatMessage], config: GenerateConfig) -> ModelOutput:
        raise RuntimeError("judge endpoint down")

    traj = trajectory(2, "x")
    model = get_model("mockllm/judge", custom_outputs=Recorder(broken))
    with pytest.raises(RuntimeError, match="judge endpoint down"):
        asyncio.run(
            run_auto_eval(
                tree,
                model,
                JudgeView(text=False),
                traj.task,
                "x",
                [traj.initial, *traj.steps],
                15,
            )
        )


# --- WebJudge -----------------------------------------------------------------------------------------


def red_of(messages: list[dict[str, Any]] | list[ChatMessage]) -> int:
    """The step a one-image request shows (by its colour)."""
    (image,) = [p for _, parts in normalized(messages) for p in parts if p[0] == "image"]
    data = base64.b64decode(image[1].split(",", 1)[1])
    return Image.open(io.BytesIO(data)).convert("RGB").getpixel((5, 5))[0]


def webjudge_script(messages: list[dict[str, Any]] | list[ChatMessage]) -> str:
    """Key points, then a rating per screenshot (every fifth step 2, the others 4), then the outcome."""
    parts = [p for _, ps in normalized(messages) for p in ps]
    images = [p for p in parts if p[0] == "image"]
    text = " ".join(p[1] for p in parts if p[0] == "text")
    if "Key Points" in text and "Action History" in text:
        return "Thoughts: every key point is met.\nStatus: success"
    if images:
        step = round(red_of(messages) / 3)
        return f"**Reasoning**: the page.\n**Score**: {2 if step % 5 == 0 else 4}"
    return "**Key Points**:\n1. Find the blue kettle\n2. Read its price"


def test_webjudge_sends_upstreams_messages_and_keeps_the_first_50_rated_3_or_more(
    upstream_trees: Path,
) -> None:
    tree = locate_tree(FARA_TREE, upstream_trees)
    traj = trajectory(69, "The blue kettle costs $24.99")  # 70 screenshots, 56 rated 4
    steps = [traj.initial, *traj.steps]
    history = action_history(traj)
    assert len(history) == 68 and not any("send_msg_to_user" in line for line in history)

    judge = Recorder(lambda messages, config: reply(webjudge_script(messages)))
    model = get_model("mockllm/judge", custom_outputs=judge)
    verdict, found, _ = asyncio.run(
        run_webjudge(tree, model, JudgeView(text=False), traj.task, history, steps)
    )
    assert verdict == 1

    # Upstream's own function on the same screenshots, with an engine that records what it is asked.
    methods = load_module(
        tree / _webjudge.JUDGE_FILE, ((_webjudge.UTILS_MODULE, tree / _webjudge.UTILS_FILE),), extra="web"
    )
    asked: list[list[dict[str, Any]]] = []

    class Engine:
        async def agenerate(self, messages: list[dict[str, Any]], **_: Any) -> list[str]:
            asked.append(messages)
            return [webjudge_script(messages)]

    with tempfile.TemporaryDirectory() as folder:
        paths = []
        for n, step in enumerate(steps):
            paths.append(str(Path(folder, f"{n}.png")))
            Path(paths[-1]).write_bytes(step.screenshot)
        outcome, *_ = asyncio.run(
            methods.WebJudge_Online_Mind2Web_eval(traj.task, history, paths, Engine(), 3)
        )
    expected = sorted(repr(normalized(m)) for m in [*asked, outcome])
    assert sorted(repr(normalized(sent)) for sent, _ in judge.calls) == expected

    final = normalized(judge.calls[-1][0])
    images = [p for p in final[1][1] if p[0] == "image"]
    assert len(images) == 50 and all(p[2] == "high" for p in images)
    kept = [
        round(red_of([{"role": "user", "content": [{"type": "image_url", "image_url": {"url": p[1]}}]}]) / 3)
        for p in images
    ]
    assert kept == [i for i in range(70) if i % 5 != 0][:50]  # the first 50 rated >= 3, in order
    text = final[1][1][0][1]
    assert "$24.99" not in text  # no final response
    assert found["record"] and len(found["record"]) == 70


def test_reasoning_judge_gets_2048_tokens_and_an_empty_verdict_is_a_judge_error(upstream_trees: Path) -> None:
    tree = locate_tree(FARA_TREE, upstream_trees)
    traj = trajectory(3, "done")

    def reasoner(messages: list[ChatMessage], config: GenerateConfig) -> ModelOutput:
        text = webjudge_script(messages)
        if text.startswith("Thoughts"):  # the verdict call: its reasoning spends the budget first
            out = reply("")
            out.choices[0].stop_reason = "max_tokens"
            return out
        return reply(text)

    judge = Recorder(reasoner)
    model = get_model("mockllm/o4-mini", custom_outputs=judge)
    with pytest.raises(JudgeError, match="no text"):
        asyncio.run(
            run_webjudge(
                tree,
                model,
                JudgeView(text=False),
                traj.task,
                action_history(traj),
                [traj.initial, *traj.steps],
            )
        )
    assert judge.calls and all(c.max_tokens >= 2048 and c.temperature is None for _, c in judge.calls)
    plain = get_model("mockllm/judge", custom_outputs=Recorder(lambda m, c: reply(webjudge_script(m))))
    _, utils = _webjudge.judge_modules(tree)
    assert _webjudge.judge_config(utils, str(plain)).max_tokens == 512  # upstream engine's default


def test_text_variant_replaces_each_image_upstream_attaches_with_its_rendering(upstream_trees: Path) -> None:
    """A judge that cannot see images gets upstream's messages with each screenshot as its page text."""
    tree = locate_tree(WEBVOYAGER_TREE, upstream_trees)
    traj = trajectory(4, "The blue kettle costs $24.99")
    steps = page_texts(traj)
    judge = Recorder(lambda messages, config: reply("SUCCESS"))
    model = get_model("mockllm/judge", custom_outputs=judge)
    asyncio.run(run_auto_eval(tree, model, JudgeView(text=True, ocr=False), traj.task, "x", steps, 3))
    ((sent, _),) = judge.calls
    parts = normalized(sent)[1][1]
    assert not [p for p in parts if p[0] == "image"]
    renderings = [p[1] for p in parts if "the judge cannot see images" in p[1]]
    assert [r.split('heading "')[1].split('"')[0] for r in renderings] == ["page 2", "page 3", "page 4"]
    assert parts[0][1].startswith("TASK: ") and parts[-1][0] == "text"  # upstream's closing line


def test_an_empty_webjudge_verdict_ends_the_sample_as_a_judge_error_not_a_zero(
    tmp_path: Path, upstream_trees: Path
) -> None:
    """Through Inspect: the sample errors (it can be scored again), not a 0 for the agent."""
    traj = trajectory(3, "done")

    class Episode:
        trajectory = traj

        async def close(self) -> None:
            return None

    @solver
    def replay() -> Any:
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            bind_env(Episode())  # type: ignore[arg-type]
            return state

        return solve

    def reasoner(messages: list[ChatMessage], config: GenerateConfig) -> ModelOutput:
        text = webjudge_script(messages)
        return reply("" if text.startswith("Thoughts") else text)

    task = Task(
        dataset=[Sample(input=traj.task)], solver=replay(), scorer=webjudge(upstream_dir=str(upstream_trees))
    )
    (log,) = inspect_eval(
        task,
        model=get_model("mockllm/agent"),
        model_roles={"judge": get_model("mockllm/o4-mini", custom_outputs=Recorder(reasoner))},
        log_dir=str(tmp_path),
        display="none",
    )
    sample = (log.samples or [None])[0]
    assert sample is not None and sample.error is not None
    assert "WebJudge verdict call" in sample.error.message and "returned no text" in sample.error.message
    assert not sample.scores


def test_webjudge_text_variant_shows_each_screenshot_as_its_page_text(upstream_trees: Path) -> None:
    tree = locate_tree(FARA_TREE, upstream_trees)
    traj = trajectory(3, "done")
    steps = page_texts(traj)

    def script(messages: list[ChatMessage], config: GenerateConfig) -> ModelOutput:
        text = " ".join(m.text for m in messages)
        if "Action History" in text:
            return reply("Thoughts: ok\nStatus: success")
        if "the judge cannot see images" in text:
            return reply("**Reasoning**: page.\n**Score**: 4")
        return reply("**Key Points**:\n1. x")

    judge = Recorder(script)
    model = get_model("mockllm/judge", custom_outputs=judge)
    verdict, found, _ = asyncio.run(
        run_webjudge(tree, model, JudgeView(text=True, ocr=False), traj.task, action_history(traj), steps)
    )
    assert verdict == 1 and [r["Score"] for r in found["record"]] == [4, 4, 4, 4]
    assert not any(
        isinstance(c, ContentImage)
        for m, _ in judge.calls
        for x in m
        for c in x.content
        if not isinstance(x.content, str)
    )
    final = judge.calls[-1][0][1].text
    assert all(f'heading "page {n}"' in final for n in range(4))
