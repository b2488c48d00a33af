"""The whole Inspect task with a scripted model: OSWorld's baseline agent (from the tree) prompts and
parses, the harness acts, OSWorld's checker scores.

The scripted model stands in for a vision model (none can run on CPU here); everything else is real:
the local desktop, OSWorld's setup steps, upstream's PromptAgent, the computer harness, the checker.
"""

from __future__ import annotations

import base64
import os
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog, EvalSample, resolve_sample_attachments
from inspect_ai.model import ContentImage, ContentText

from tests.benchmarks.osworld._oracles import ORACLES
from tests.benchmarks.osworld._scripted import scripted_model

pytestmark = [pytest.mark.slow, pytest.mark.e2e]

VLC_TASK = "9195653c-f4aa-453d-aa95-787f6ccfaae9"
INFEASIBLE_TASK = "cb130f0d-d36f-4302-9838-b3baf46139b6"
#: Upstream's runner waits 60 s before the first observation and 20 s before the checker; the tests
#: shorten both (the protocol record then says the run is not comparable).
WAITS = {"ready_wait": 1.0, "settle_wait": 1.0}


def _first_request(sample: EvalSample) -> Any:
    return next(e for e in sample.events if e.event == "model")


def _upstream_payload(root: Path, instruction: str, screenshot: bytes) -> dict[str, Any]:
    """The request upstream's own PromptAgent (from the tree, unchanged) builds for this observation."""
    from forge_eval.benchmarks.osworld._agent import agent_module, run_defaults

    defaults = run_defaults(root)
    agent = agent_module(root).PromptAgent(
        model="gpt-4o",
        max_tokens=defaults["max_tokens"],
        top_p=defaults["top_p"],
        temperature=defaults["temperature"],
        action_space="pyautogui",
        observation_type="screenshot",
        max_trajectory_length=defaults["max_trajectory_length"],
        client_password="password",
    )
    sent: list[dict[str, Any]] = []
    agent.call_llm = lambda payload: sent.append(payload) or "```DONE```"
    agent.predict(instruction, {"screenshot": screenshot, "accessibility_tree": None})
    return sent[0]


def _my_desktops() -> list[Path]:
    """The state folders (homes) of this process's desktops (owner: "pid start-time uid")."""
    from forge_eval.benchmarks.osworld._desktop import STATE_ROOT

    mine = str(os.getpid())
    return [d for d in STATE_ROOT.glob("desktop-*") if (d / "owner").read_text().split()[0] == mine]


def _part(part: dict[str, Any]) -> tuple[str, str | None]:
    if part["type"] == "text":
        return part["text"], None
    return part["image_url"]["url"], part["image_url"]["detail"]


def test_baseline_agent_through_inspect(osworld_root: Path, desktop_ready: None, tmp_path: Path) -> None:
    from forge_eval.benchmarks.osworld import osworld

    replies = [
        f"I will set the maximum volume.\n```python\n{ORACLES[VLC_TASK][1]}```",
        "The setting is saved.\n```DONE```",
        "A VLC feature that does not exist cannot be enabled.\n```FAIL```",
    ]
    task = osworld(
        task_ids=f"{VLC_TASK},{INFEASIBLE_TASK}", data_dir=str(osworld_root), max_steps=3, pause=0.3, **WAITS
    )
    log: EvalLog
    # two samples at once: the second waits for the desktop turn, and its desktop is started during the
    # first one's agent turn
    (log,) = inspect_eval(
        task, model=scripted_model(replies), log_dir=str(tmp_path), display="none", max_samples=2
    )
    assert log.status == "success", log.error
    starts = sorted((s.metadata["desktop_start"]["prestarted"], s.id) for s in log.samples or [])
    assert starts == [(False, VLC_TASK), (True, INFEASIBLE_TASK)]
    assert not _my_desktops(), "a desktop (a spare) outlived the run"
    scores = {s.id: s.scores["osworld_scorer"] for s in log.samples or []}
    assert scores[VLC_TASK].value == 1.0, scores[VLC_TASK].explanation
    assert scores[INFEASIBLE_TASK].value == 1.0 and scores[INFEASIBLE_TASK].answer == "FAIL"
    vlc = resolve_sample_attachments(next(s for s in log.samples or [] if s.id == VLC_TASK))
    assert vlc.metadata["observation"] == "screenshot" and vlc.metadata["steps"] == 2

    # The first request is, part for part, the one upstream's PromptAgent builds for that screenshot,
    # with run.py's sampling defaults.
    event = _first_request(vlc)
    images = [c for m in event.input for c in m.content if isinstance(c, ContentImage)]
    screenshot = base64.b64decode(images[0].image.split(",", 1)[1])
    payload = _upstream_payload(osworld_root, vlc.input, screenshot)
    sent = [
        (m.role, [(c.text, None) if isinstance(c, ContentText) else (c.image, c.detail) for c in m.content])
        for m in event.input
    ]
    expected = [(m["role"], [_part(p) for p in m["content"]]) for m in payload["messages"]]
    assert sent == expected
    config = log.plan.config
    assert (
        (config.max_tokens, config.top_p, config.temperature)
        == (
            payload["max_tokens"],
            payload["top_p"],
            payload["temperature"],
        )
        == (1500, 0.9, 1.0)
    )


def test_computer13_json_fail_on_an_infeasible_task_scores_one(
    osworld_root: Path, desktop_ready: None, tmp_path: Path
) -> None:
    from forge_eval.benchmarks.osworld import osworld

    task = osworld(
        task_ids=INFEASIBLE_TASK, data_dir=str(osworld_root), action_space="computer_13", max_steps=3, **WAITS
    )
    model = scripted_model(['This cannot be done.\n```json\n{"action_type": "FAIL"}\n```'])
    (log,) = inspect_eval(task, model=model, log_dir=str(tmp_path), display="none")
    assert log.status == "success", log.error
    (sample,) = log.samples or []
    score = sample.scores["osworld_scorer"]
    assert score.value == 1.0 and score.answer == "FAIL", score.explanation
    assert sample.metadata["steps"] == 1  # FAIL ended the episode: the other two steps were not taken
