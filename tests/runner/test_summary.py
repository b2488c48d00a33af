"""What the end of `forge-eval run` tells a newcomer about the embedded model's numbers."""

from forge_eval._cli._run import DETERMINISTIC_COST, variability_note


def test_an_embedded_model_run_says_its_numbers_vary_and_what_deterministic_costs():
    note = variability_note({"model": "qwen-0.5b", "deterministic": False})
    assert note is not None and "(qwen-0.5b) vary between runs of the same command" in note
    assert f"--deterministic makes them repeatable, at {DETERMINISTIC_COST}." in note


def test_no_such_note_for_a_deterministic_run_or_another_model():
    assert variability_note({"model": "qwen-0.5b", "deterministic": True}) is None
    assert variability_note({"model": "openai-api/vllm/Qwen2.5-7B-Instruct", "deterministic": False}) is None
