"""The live-web benchmarks' protocol records: comparable only with upstream's agent, judge, data and the
official judge model on the live web; every departure named."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from forge_eval.benchmarks import BENCHMARKS, RunUsed

CASES = {
    "webvoyager": ("openai/gpt-4o", "fara", "MinorJerry/WebVoyager"),
    "online_mind2web": ("openai/o4-mini", "2025-11", "microsoft/fara"),
}


def _used(name: str, data: Path, trees: Path, **changes: Any) -> RunUsed:
    entry = BENCHMARKS.get(name)
    judge, version, _ = CASES[name]
    ids = tuple(sorted(s.id for s in entry.selection(data, version=version).samples))
    args = {"version": version, "upstream_dir": str(trees), "max_steps": 30, "observation": "auto"}
    args.update(changes.pop("task_args", {}))
    fields: dict[str, Any] = {"harness": "molmoweb", "judge_model": judge, "task_ids": ids, "data_dir": data}
    fields.update(changes)
    return RunUsed(task_args=args, **fields)


@pytest.fixture(params=sorted(CASES))
def case(request: pytest.FixtureRequest, upstream_trees: Path) -> tuple[str, Path, Path]:
    data = upstream_trees.parent / "data/benchmarks" / request.param
    if not data.is_dir():
        pytest.skip(f"shared {request.param} data not found at {data}")
    return request.param, data, upstream_trees


def test_the_official_setup_is_comparable_and_names_upstreams_files(case: tuple[str, Path, Path]) -> None:
    name, data, trees = case
    record = BENCHMARKS.get(name).protocol(_used(name, data, trees))
    assert record.comparable, record.reasons
    judge_prompt = record.of("judge_prompt")[0].official
    assert judge_prompt.kind == "upstream" and judge_prompt.repo == CASES[name][2]
    prompt = record.of("agent_prompt")[0].official
    assert prompt.kind == "upstream" and prompt.repo == "allenai/molmoweb"
    sampling = record.of("agent_sampling")[0].official
    assert sampling.value == {"temperature": 0.7, "top_p": 0.8}
    # the harness is official only as MolmoWeb's runner runs it: its history, cap, steps and ending
    (harness,) = record.of("harness")
    assert harness.same and harness.official.kind == "upstream"
    assert harness.official.path == "benchmarks/benchmarks.py"
    assert harness.ours.value == {**harness.official.value, "name": "molmoweb"}
    assert {k: harness.ours.value[k] for k in ("max_steps", "max_past_steps", "max_past_images")} == {
        "max_steps": 30,
        "max_past_steps": 10,
        "max_past_images": 0,
    }


@pytest.mark.parametrize(
    ("change", "differs"),
    [
        ({"task_args": {"judge_text": True}}, {"judge prompt"}),
        (
            {"task_args": {"observation": "text"}},
            {"harness, version and configuration", "agent prompt", "agent sampling settings"},
        ),
        ({"task_args": {"max_steps": 100}}, {"harness, version and configuration"}),
        (
            {"harness": "react"},
            {"harness, version and configuration", "agent prompt", "agent sampling settings"},
        ),
        ({"judge_model": "openai/gpt-4.1-mini"}, {"judge model"}),
        ({"task_args": {"local_clones": True}}, {"environment: web"}),
        ({"task_ids": ("x",)}, {"task set and subset"}),
    ],
)
def test_each_departure_makes_the_run_not_comparable(
    case: tuple[str, Path, Path], change: dict[str, Any], differs: set[str]
) -> None:
    name, data, trees = case
    record = BENCHMARKS.get(name).protocol(_used(name, data, trees, **change))
    assert not record.comparable
    assert {e.name for e in record.elements if not e.matches} == differs
