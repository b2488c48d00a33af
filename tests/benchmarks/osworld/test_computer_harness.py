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
