"""Behavior of real forgelab runs (services, react harness, injected faults) with scripted policies.

Two policies run the quick subset over two seeds each: one follows every step of the task's plan
(retrying calls that hit an injected fault), the other stops after the first step. Their logs are
the project's own: Inspect's react loop, native ToolEvents, forgelab metadata (services,
required_tools, plan). The analysis must see full plan completion and coverage for the first, less
for the second, and a positive paired difference between them.
"""

import json
from pathlib import Path

import pytest
from _behavior_logs import run_dir
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog
from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageTool,
    ChatMessageUser,
    ModelOutput,
    ModelUsage,
    get_model,
)

from forge_eval.analysis.behavior import analyze_run, read_run_transcripts
from forge_eval.benchmarks.forgelab import QUICK_SUBSET, forgelab, load_tasks

TASKS = {t.prompt: t for t in load_tasks() if t.id in QUICK_SUBSET}
SEEDS = (1, 2)


def _policy(max_steps: int | None):
    """A stateless scripted model: the task's plan steps in order (at most `max_steps`), then submit."""

    def outputs(messages: list[ChatMessage], tools, choice, config) -> ModelOutput:
        task = TASKS[next(m.text for m in messages if isinstance(m, ChatMessageUser))]
        calls = [m for m in messages if isinstance(m, ChatMessageAssistant) and m.tool_calls]
        results = [m for m in messages if isinstance(m, ChatMessageTool)]
        steps = task.plan[:max_steps]
        if results and results[-1].error is not None:
            last = calls[-1].tool_calls[0]
            output = ModelOutput.for_tool_call("mockllm", last.function, last.arguments)
        elif (done := len(calls) - sum(r.error is not None for r in results)) < len(steps):
            output = ModelOutput.for_tool_call("mockllm", steps[done].tool, steps[done].reference_args())
        else:
            output = ModelOutput.for_tool_call("mockllm", "submit", {"answer": task.answer})
        output.usage = ModelUsage(input_tokens=10, output_tokens=5, total_tokens=15)
        return output

    return outputs


def _run(path: Path, max_steps: int | None) -> Path:
    logs: list[EvalLog] = []
    for seed in SEEDS:
        model = get_model("mockllm/model", custom_outputs=_policy(max_steps))
        task = forgelab(seed=seed, subset="quick")
        (log,) = inspect_eval(task, model=model, display="none", log_dir=str(path / "raw"), max_samples=4)
        assert log.status == "success", log.error
        logs.append(log)
    return run_dir(path, logs, harness="react")


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("forgelab")
    return _run(root / "full", None), _run(root / "first_step", 1)


def test_forgelab_calls_are_service_accesses(runs: tuple[Path, Path]) -> None:
    t = read_run_transcripts(runs[0])
    assert len(t.rollouts) == len(TASKS) * len(SEEDS)
    services = t.calls.loc[t.calls["tool"] != "submit", "service"]
    assert services.notna().all()
    assert set(t.calls.loc[t.calls["tool"] != "submit", "access"]) <= {"read", "write"}
    assert (t.calls["error_kind"] == "tool_error").any()  # the injected faults
    writes = t.calls[t.calls["access"] == "write"]
    assert all(w and w[0].startswith("@") for w in writes["writes"])


def test_full_plan_follower_vs_first_step_only(runs: tuple[Path, Path]) -> None:
    full, first = runs
    data = analyze_run(full, compare=first, n_resamples=500)
    caps = data["groups"]["overall"]["capabilities"]
    assert caps["plan_completion"]["estimate"] == 100.0
    assert caps["plan_fraction"]["estimate"] == 100.0
    assert caps["tool_coverage"]["estimate"] == 100.0
    assert caps["format_robustness"]["estimate"] == 100.0
    assert caps["error_recovery"]["estimate"] is not None
    other = json.loads(json.dumps(analyze_run(first, n_resamples=500)))["groups"]["overall"]["capabilities"]
    with_plan = [t for t in TASKS.values() if t.plan]  # a refusal task has no plan: not counted
    multi_step = [t for t in with_plan if len(t.plan) > 1]
    assert 0 < len(multi_step) < len(with_plan) < len(TASKS)
    assert other["plan_completion"]["estimate"] == pytest.approx(100 * (1 - len(multi_step) / len(with_plan)))
    assert other["plan_fraction"]["estimate"] < 100.0
    paired = data["comparison"]["groups"]["overall"]["capabilities"]["plan_completion"]
    assert paired["estimate"] == pytest.approx(100 * len(multi_step) / len(with_plan))
    assert paired["ci_low"] <= paired["estimate"] <= paired["ci_high"]
