"""The reply cap forge-eval gives the agent: an embedded model's default unless `--max-tokens` is given,
none for other models (their benchmark's own setting stands). What is given reaches results.json's
protocol record as Inspect applied it (tests/runner/test_protocol.py)."""

import re
import subprocess
from pathlib import Path

import pytest

from forge_eval.models import EMBEDDED_MODELS
from forge_eval.runner import RunSpec
from forge_eval.runner._execute import agent_settings


def _spec(**kwargs) -> RunSpec:
    return RunSpec(benchmark="forgelab", seeds=(0, 1), out=Path("runs/x"), **kwargs)


@pytest.mark.parametrize("name", EMBEDDED_MODELS.names())
def test_an_embedded_model_gets_its_default_reply_cap(name):
    cap = EMBEDDED_MODELS.get(name).max_reply_tokens
    assert 0 < cap < EMBEDDED_MODELS.get(name).n_ctx_per_slot
    assert agent_settings(_spec(), name) == {"max_tokens": cap}


def test_max_tokens_overrides_the_cap_for_any_model():
    assert agent_settings(_spec(max_tokens=1000), "qwen-0.5b") == {"max_tokens": 1000}
    assert agent_settings(_spec(max_tokens=32), "openai-api/vllm/m") == {"max_tokens": 32}


def test_other_models_keep_the_benchmarks_setting():
    assert agent_settings(_spec(), "openai-api/vllm/Qwen2.5-7B-Instruct") == {}


def test_make_run_caps_replies_below_the_embedded_default(tmp_path):
    """README's `make run` passes its own, lower cap (the quick run's time follows the tokens generated)."""
    root = Path(__file__).resolve().parents[2]
    # a venv that does not exist: the dry run lists the set-up steps too, and runs nothing
    dry = subprocess.run(
        ["make", "-n", "run", f"VENV={tmp_path / 'venv'}"],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    command = next(line for line in dry.splitlines() if "forge-eval run forgelab" in line)
    cap = int(re.search(r"--max-tokens (\d+)", command).group(1))
    assert cap < EMBEDDED_MODELS.get("qwen-0.5b").max_reply_tokens
    assert agent_settings(_spec(max_tokens=cap), "qwen-0.5b") == {"max_tokens": cap}
