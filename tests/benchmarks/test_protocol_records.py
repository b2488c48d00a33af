"""Protocol records of our own benchmarks (official = ours) and the pending record of the others."""

import inspect
import shutil
from pathlib import Path

import pytest

from forge_eval.benchmarks import BENCHMARKS, Benchmark, OfficialSettings, RunUsed
from forge_eval.benchmarks.forgelab import forgelab
from forge_eval.benchmarks.forgelab._data import DATA_DIR
from forge_eval.benchmarks.weblab._task import weblab


def _defaults(task_function) -> dict:
    """The task's arguments as Inspect records them for a run at the defaults (seed left out)."""
    parameters = inspect.signature(task_function).parameters
    return {name: p.default for name, p in parameters.items() if name != "seed"}


def _used(benchmark: str, **changes) -> RunUsed:
    entry = BENCHMARKS.get(benchmark)
    args = _defaults(forgelab if benchmark == "forgelab" else weblab)
    defaults = {
        "harness": entry.default_harness,
        "task_args": args,
        "sampling": {"max_tokens": args["max_tokens"]},
        "task_ids": tuple(sorted(s.id for s in entry.load())),
    }
    return RunUsed(**{**defaults, **changes})


@pytest.mark.parametrize("benchmark", ["forgelab", "weblab"])
def test_our_benchmarks_at_their_defaults_are_comparable(benchmark):
    record = BENCHMARKS.get(benchmark).protocol(_used(benchmark))
    assert record.reasons == [] and record.comparable is True


@pytest.mark.parametrize(
    ("changes", "reason"),
    [
        ({"sampling": {"max_tokens": 512, "temperature": 0.7}}, "agent sampling settings differs"),
        ({"harness": "codex"}, "harness, version and configuration differs"),
        ({"task_ids": ("ticket-status",), "limit": 1}, "task set and subset differs"),
    ],
)
def test_forgelab_runs_that_depart_from_the_defaults_are_not(changes, reason):
    record = BENCHMARKS.get("forgelab").protocol(_used("forgelab", **changes))
    assert record.comparable is False
    assert len(record.reasons) == 1 and record.reasons[0].startswith(reason), record.reasons


def test_forgelab_with_other_task_data_is_not_comparable(tmp_path: Path):
    data = tmp_path / "data"
    shutil.copytree(DATA_DIR, data, ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    args = {**_defaults(forgelab), "data_dir": str(data)}
    assert BENCHMARKS.get("forgelab").protocol(_used("forgelab", task_args=args)).comparable is True
    (data / "tasks.yaml").write_text((data / "tasks.yaml").read_text() + "\n# edited\n")
    record = BENCHMARKS.get("forgelab").protocol(_used("forgelab", task_args=args))
    assert [r.split(":")[0] for r in record.reasons] == ["data revision and checksum differs"]


def test_weblab_with_a_tool_calling_harness_changes_harness_and_prompt():
    record = BENCHMARKS.get("weblab").protocol(_used("weblab", harness="react"))
    assert {e.element for e in record.elements if not e.same} == {"harness", "agent_prompt"}
    browser = next(e for e in record.elements if e.name == "environment: browser build")
    assert browser.same and browser.official.kind == "unpinned"


def test_a_benchmark_whose_record_is_not_filled_is_not_comparable_and_says_why():
    """Every benchmark fills its record now; the default (`Benchmark.protocol`) stays for new ones."""

    class Unfilled(Benchmark):
        name = "unfilled"
        description = "a benchmark whose protocol record is not filled"
        official = OfficialSettings(judge_role="judge", judge_model="judge/model")

    record = Unfilled().protocol(RunUsed(harness="react", judge_model="judge/model"))
    assert record.comparable is False
    assert record.reasons[0].startswith("protocol record not yet filled: ")
    judge = record.of("judge_model")
    assert judge and all(e.same for e in judge)
