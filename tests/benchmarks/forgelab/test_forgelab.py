"""forgelab end to end with scripted models: the oracle passes every task, doing nothing fails them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.event import ModelEvent, ToolEvent
from inspect_ai.log import EvalLog
from inspect_ai.model import get_model

from forge_eval._errors import ForgeError, UnknownNameError, UsageError
from forge_eval.benchmarks import BENCHMARKS
from forge_eval.benchmarks.forgelab import QUICK_SUBSET, TOOL_SPECS, forgelab, load_tasks, select_tasks
from forge_eval.rundir import read_tool_specs
from tests.benchmarks.forgelab._oracle import do_nothing, oracle

TASKS = load_tasks()
CONTRACT_KEYS = {"services", "required_tools", "plan", "difficulty", "category", "fault"}
SEED = 7


def run(outputs: object, tmp: Path, **task_args: object) -> EvalLog:
    model = get_model("mockllm/model", custom_outputs=outputs)
    (log,) = inspect_eval(forgelab(seed=SEED, **task_args), model=model, display="none", log_dir=str(tmp))
    assert log.status == "success", log.error
    return log


@pytest.fixture(scope="module")
def oracle_log(tmp_path_factory: pytest.TempPathFactory) -> EvalLog:
    return run(oracle(list(TASKS)), tmp_path_factory.mktemp("oracle"))


@pytest.fixture(scope="module")
def idle_log(tmp_path_factory: pytest.TempPathFactory) -> EvalLog:
    return run(do_nothing, tmp_path_factory.mktemp("idle"))


def score_of(sample) -> float:  # noqa: ANN001 (EvalSample)
    return float(sample.scores["forgelab_scorer"].value)


def test_task_set_has_the_required_spread() -> None:
    assert len(TASKS) >= 24
    assert len({s for t in TASKS for s in t.services}) >= 4
    categories = {t.category for t in TASKS}
    assert categories == {"lookup", "multi_step", "write_confirm", "error_recovery", "refusal"}
    for t in TASKS:
        if t.category == "multi_step":
            assert len(t.plan) >= 3 and len({TOOL_SPECS[s.tool].service for s in t.plan}) >= 2, t.id
        if t.category == "write_confirm":
            kinds = [TOOL_SPECS[s.tool].kind for s in t.plan]
            assert "write" in kinds and kinds[-1] == "read", t.id
        assert (t.fault is not None) == (t.category == "error_recovery"), t.id
    assert {t.difficulty for t in TASKS} == {"easy", "medium", "hard"}


def test_sample_metadata_contract() -> None:
    for sample in select_tasks().samples:
        meta = sample.metadata or {}
        assert set(meta) >= CONTRACT_KEYS, sample.id
        assert all(set(step) == {"id", "tool", "args", "description"} for step in meta["plan"])
        assert meta["required_tools"] == list(dict.fromkeys(step["tool"] for step in meta["plan"]))
        assert all(TOOL_SPECS[t].service in meta["services"] for t in meta["required_tools"])
        assert meta["fault"] is None or meta["fault"]["service"] in meta["services"]
        # behavioral analysis reads how the offered tools touch the services from here, not from TOOL_SPECS
        recorded = read_tool_specs(meta)
        assert recorded == {n: s for n, s in TOOL_SPECS.items() if s.service in meta["services"]}, sample.id


def test_quick_subset_spans_categories() -> None:
    quick = select_tasks(subset="quick").samples
    assert [s.id for s in quick] == list(QUICK_SUBSET)
    assert len({s.metadata["category"] for s in quick}) == 5
    assert all(len(s.metadata["plan"]) <= 4 for s in quick)


def test_subset_selection_and_errors() -> None:
    assert {s.metadata["category"] for s in select_tasks(subset="refusal").samples} == {"refusal"}
    assert {s.metadata["difficulty"] for s in select_tasks(subset="hard").samples} == {"hard"}
    picked = select_tasks(task_ids="kb-retry, contacts-phone").samples
    assert [s.id for s in picked] == ["kb-retry", "contacts-phone"]
    with pytest.raises(UsageError, match="unknown forgelab subset 'nope'"):
        select_tasks(subset="nope")
    with pytest.raises(UnknownNameError, match="unknown forgelab task 'nope'"):
        select_tasks(task_ids="nope")


def test_bad_task_data_names_the_task(tmp_path: Path) -> None:
    (tmp_path / "world.yaml").write_text("{}")
    (tmp_path / "tasks.yaml").write_text(
        "- {id: broken, category: lookup, difficulty: easy, services: [kb], prompt: p, answer: a,\n"
        "   plan: [{id: s, tool: mail_send, description: d}], checks: [{type: answer_declines}]}\n"
    )
    with pytest.raises(ForgeError, match="invalid forgelab task broken") as err:
        load_tasks(tmp_path)
    assert "mail_send" in str(err.value)


def test_benchmark_registry_entry() -> None:
    bench = BENCHMARKS.get("forgelab")
    assert bench.official.trials == 3 and bench.official.pass_threshold == 1.0 and bench.official.graded
    assert bench.quick_subset == QUICK_SUBSET
    assert len(bench.load()) == len(TASKS)
    task = bench.task(seed=4, harness="react", subset="quick")
    assert task.name == "forgelab" and len(task.dataset) == len(QUICK_SUBSET)
    with pytest.raises(UnknownNameError, match="unknown harness 'nope'"):
        bench.task(seed=0, harness="nope")


def test_oracle_passes_every_task(oracle_log: EvalLog) -> None:
    assert oracle_log.eval.task == "forgelab" and oracle_log.eval.task_args["seed"] == SEED
    samples = {s.id: s for s in oracle_log.samples or []}
    assert set(samples) == {t.id for t in TASKS}
    failed = {i: s.scores["forgelab_scorer"].explanation for i, s in samples.items() if score_of(s) != 1.0}
    assert failed == {}
    metrics = oracle_log.results.scores[0].metrics
    assert metrics["accuracy"].value == 1.0 and metrics["pass_rate"].value == 1.0


def test_oracle_run_shows_injected_faults_as_tool_errors(oracle_log: EvalLog) -> None:
    for sample in oracle_log.samples or []:
        tool_events = [e for e in sample.events if isinstance(e, ToolEvent)]
        errors = [e for e in tool_events if e.error is not None]
        if sample.metadata["category"] == "error_recovery":
            assert len(errors) == 1, sample.id
            message = errors[0].error.message
            assert "temporarily unavailable" in message or "rate limited" in message
        else:
            assert errors == [], sample.id


def test_seed_reaches_the_model(oracle_log: EvalLog) -> None:
    sample = (oracle_log.samples or [])[0]
    seeds = {e.config.seed for e in sample.events if isinstance(e, ModelEvent)}
    assert seeds == {SEED}


def test_only_the_tasks_services_tools_are_offered(oracle_log: EvalLog) -> None:
    for sample in oracle_log.samples or []:
        event = next(e for e in sample.events if isinstance(e, ModelEvent))
        offered = {t.name for t in event.tools} - {"submit"}
        expected = {n for n, s in TOOL_SPECS.items() if s.service in sample.metadata["services"]}
        assert offered == expected, sample.id


def test_doing_nothing_fails_every_task(idle_log: EvalLog) -> None:
    samples = idle_log.samples or []
    assert len(samples) == len(TASKS)
    for sample in samples:
        score = sample.scores["forgelab_scorer"]
        assert score_of(sample) < 1.0, sample.id
        assert "FAIL" in (score.explanation or "")
        checks = score.metadata["checks"]
        assert score.metadata["passed"] is False and any(not c["passed"] for c in checks)
    refusal = next(s for s in samples if s.id == "refuse-credential-leak")
    assert score_of(refusal) == pytest.approx(2 / 3)  # nothing sent, nothing leaked, but no refusal


ENTRY_POINT_SCRIPT = """
import sys
from inspect_ai import eval
from inspect_ai.model import ModelOutput, ModelUsage, get_model

def submit(*args):
    answer = {"answer": "open, high"}
    out = ModelOutput.for_tool_call(model="mockllm", tool_name="submit", tool_arguments=answer)
    out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
    return out

# Nothing imports forge-eval before Inspect resolves the name, as with `inspect eval forge_eval/forgelab`.
(log,) = eval("forge_eval/forgelab", task_args={"seed": 1, "task_ids": "ticket-status"},
              model=get_model("mockllm/model", custom_outputs=submit), display="none", log_dir=sys.argv[1])
print(log.status, log.eval.task, log.eval.task_args["seed"], log.samples[0].scores["forgelab_scorer"].value)
"""


def test_task_resolves_by_name_through_the_inspect_entry_point(tmp_path: Path) -> None:
    script = tmp_path / "resolve.py"  # a file: Inspect exits silently when run with `python -c`
    script.write_text(ENTRY_POINT_SCRIPT)
    result = subprocess.run(
        [sys.executable, str(script), str(tmp_path)], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.split() == ["success", "forgelab", "1", "1.0"]
