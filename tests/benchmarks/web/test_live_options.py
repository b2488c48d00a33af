"""The live-web tasks take every `LiveOptions` field as an option of their own, from one source: through
Inspect's `-T` (the task file loaded as `inspect eval FILE@TASK -T ...` loads it) and through
`forge-eval run -T` (the benchmark entry the runner calls)."""

from __future__ import annotations

import inspect
from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import Task
from inspect_ai._cli.util import parse_cli_args
from inspect_ai._eval.loader import load_tasks, resolve_task_args

from forge_eval._cli._options import parse_key_values
from forge_eval.benchmarks import BENCHMARKS, NothingRunnableError
from forge_eval.benchmarks.web import LiveOptions
from tests.conftest import shared_copy

ROOT = Path(__file__).resolve().parents[3]
#: benchmark -> (its own options, a task on a site weblab clones, one on a site it does not clone)
CASES = {
    "webvoyager": (("version", "site"), "Allrecipes--0", "GitHub--0"),
    "online_mind2web": (("version", "level"), "75a1b5dcd2c28508a971d98d51fe5767", None),
}
OPTIONS = ["max_steps=3", "time_limit=60", "observation=text", "judge_text=true", "max_tokens=64", "seed=7"]


def _args(name: str, trees: Path, task_ids: str) -> list[str]:
    """The options of a run on weblab's clones, as `-T` gives them; skips without the shared data."""
    data = shared_copy(trees.parent / "data/benchmarks" / name, f"shared {name} data")
    where = [f"data_dir={data}", f"upstream_dir={trees}"]
    return [*OPTIONS, "local_clones=true", f"task_ids={task_ids}", *where]


def _check(task: Task, task_id: str) -> None:
    assert [s.id for s in task.dataset] == [task_id]
    assert task.time_limit == 60 and task.config.max_tokens == 64 and task.config.seed == 7
    assert task.metadata and task.metadata["live_web"] is False and task.metadata["seed"] == 7


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_live_option_is_a_parameter_of_the_task_function(name: str) -> None:
    own, _, _ = CASES[name]
    parameters = inspect.signature(type(BENCHMARKS.get(name)).task_function).parameters
    live = {f.name: f.default for f in fields(LiveOptions)}
    assert list(parameters) == [*own, *live]
    assert {k: parameters[k].default for k in live} == live


@pytest.mark.parametrize("name", sorted(CASES))
def test_inspect_eval_T_reaches_the_task(name: str, upstream_trees: Path) -> None:
    _, task_id, _ = CASES[name]
    args = parse_cli_args(tuple(_args(name, upstream_trees, task_id)))
    (task,) = load_tasks([f"{ROOT}/benchmarks/{name}/_task.py@{name}"], args)
    _check(task, task_id)
    recorded: dict[str, Any] = resolve_task_args(task)
    assert recorded["max_steps"] == 3 and recorded["judge_text"] is True and recorded["observation"] == "text"


@pytest.mark.parametrize("name", sorted(CASES))
def test_forge_eval_run_T_reaches_the_task(name: str, upstream_trees: Path) -> None:
    _, task_id, elsewhere = CASES[name]
    options = parse_key_values(tuple(_args(name, upstream_trees, task_id)), "-T")
    entry = BENCHMARKS.get(name)
    _check(entry.task(harness=entry.default_harness, **options), task_id)
    if elsewhere:  # a task on a site with no local clone is skipped with its reason, not run on the web
        options["task_ids"] = elsewhere
        with pytest.raises(NothingRunnableError, match=f"{elsewhere}: its site has no local clone"):
            entry.task(harness=entry.default_harness, **options)
