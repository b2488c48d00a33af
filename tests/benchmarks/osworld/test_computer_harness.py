"""The computer-use harness's reply parsing and observation choice."""

from __future__ import annotations

from forge_eval.harnesses.computer import observation_for, parse_actions


def test_pyautogui_code_blocks_and_special_words() -> None:
    reply = "I will click.\n```python\npyautogui.click(10, 20)\n```\nthen\n```python\nDONE\n```"
    assert parse_actions(reply, "pyautogui") == ["pyautogui.click(10, 20)", "DONE"]
    assert parse_actions("The task is impossible.\nFAIL\n", "pyautogui") == ["FAIL"]
    assert parse_actions("no action here", "pyautogui") == []


def test_computer13_json_actions() -> None:
    reply = (
        '```json\n[{"action_type": "CLICK", "x": 1, "y": 2}, {"action_type": "TYPING", "text": "hi"}]\n```'
    )
    assert parse_actions(reply, "computer_13") == [
        {"action_type": "CLICK", "x": 1, "y": 2},
        {"action_type": "TYPING", "text": "hi"},
    ]
    assert parse_actions("```json\nnot json\n```", "computer_13") == []


def test_text_only_models_get_the_accessibility_tree() -> None:
    assert observation_for("openai-api/forge/qwen-0.5b", "auto") == "a11y_tree"
    assert observation_for("openai/gpt-4.1", "auto") == "screenshot"
    assert observation_for("openai/gpt-4.1", "screenshot_a11y_tree") == "screenshot_a11y_tree"


def test_a_policy_drives_the_loop_and_json_fail_ends_it() -> None:
    import asyncio

    from inspect_ai.model import ModelOutput
    from inspect_ai.solver import TaskState

    from forge_eval.harnesses.computer import Decision, Observation, _run_policy, is_final

    assert is_final({"action_type": "FAIL"}) and is_final("DONE") and not is_final({"action_type": "WAIT"})

    class Desktop:
        action_space, observation_type, screen_size = "computer_13", "screenshot", (1920, 1080)

        def __init__(self) -> None:
            self.acted: list[object] = []

        async def observe(self) -> Observation:
            return Observation(screenshot=b"png")

        async def act(self, action: object) -> None:  # a desktop that does not report the episode's end
            self.acted.append(action)

    class Policy:
        def __init__(self) -> None:
            self.steps = 0

        async def decide(self, instruction: str, observation: Observation) -> Decision:
            self.steps += 1
            actions = [{"action_type": "WAIT"}] if self.steps == 1 else [{"action_type": "FAIL"}, "DONE"]
            return Decision([], ModelOutput.from_content("m", "reply"), actions)

    desktop, policy = Desktop(), Policy()
    state = TaskState(model="m", sample_id=1, epoch=1, input="task", messages=[])
    state = asyncio.run(_run_policy(state, desktop, policy, max_steps=5))
    assert policy.steps == 2 and desktop.acted == [{"action_type": "WAIT"}, {"action_type": "FAIL"}]
    assert state.metadata["steps"] == 2
