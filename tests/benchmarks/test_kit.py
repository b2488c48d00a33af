"""The benchmark kit every benchmark declares itself with: selection, skip rules, the task tail, the judge."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import pytest
from inspect_ai import Task
from inspect_ai.dataset import Sample
from inspect_ai.model import GenerateConfig
from inspect_ai.scorer import includes
from inspect_ai.solver import generate

from forge_eval._errors import UnknownNameError, UsageError
from forge_eval.benchmarks import (
    Benchmark,
    JudgeSetup,
    NothingRunnableError,
    RunUsed,
    Selection,
    SkipRules,
    benchmark_task,
    select,
)
from forge_eval.rundir import NotRecorded, Ours, ProtocolRecord


@dataclass(frozen=True)
class Item:
    id: str
    color: str
    size: str = "small"


ITEMS = [Item("a", "red"), Item("b", "blue", "large"), Item("c", "red", "large"), Item("d", "green")]


def test_select_by_ids_keeps_their_order_and_lists_the_valid_ones() -> None:
    assert [t.id for t in select(ITEMS, "c, a", what="toy")] == ["c", "a"]
    assert [t.id for t in select(ITEMS, ["b"], "red", what="toy")] == ["b"]  # ids win over a subset
    with pytest.raises(UnknownNameError, match="unknown toy task 'z'. Valid toy tasks: a, b, c, d"):
        select(ITEMS, "a,z", what="toy")


def test_select_by_named_subsets_and_groups() -> None:
    named = {"warm": lambda t: t.color == "red", "quick": ("d", "b")}
    groups = lambda t: (t.color, t.size)  # noqa: E731
    assert select(ITEMS, None, None, what="toy") == ITEMS == select(ITEMS, subset="all", what="toy")
    assert [t.id for t in select(ITEMS, subset="warm", what="toy", subsets=named)] == ["a", "c"]
    assert [t.id for t in select(ITEMS, subset="quick", what="toy", subsets=named)] == ["d", "b"]
    assert [t.id for t in select(ITEMS, subset="large", what="toy", groups=groups)] == ["b", "c"]
    with pytest.raises(UsageError, match="unknown toy colour 'pink'") as raised:
        select(ITEMS, subset="pink", what="toy", subsets=named, groups=groups, subset_kind="colour")
    assert raised.value.hint == "use one of: all, warm, quick, blue, green, large, red, small"


def test_skip_rules_are_asked_in_order_and_the_first_reason_is_reported() -> None:
    rules: SkipRules[Item, set[str]] = SkipRules("toy")
    asked: list[str] = []

    @rules.rule("paint")
    def _paint(item: Item, have: set[str]) -> str | None:
        asked.append("paint")
        return None if item.color in have else f"needs {item.color} paint"

    @rules.rule("room")
    def _room(item: Item, have: set[str]) -> str | None:
        asked.append("room")
        return "needs room" if item.size == "large" else None

    assert rules.names() == ["paint", "room"]
    assert rules.reason(ITEMS[0], {"red"}) is None and asked == ["paint", "room"]
    assert rules.reason(ITEMS[1], {"red"}) == "needs blue paint"
    assert rules.reason(ITEMS[1], {"red"}, skip=["paint"]) == "needs room"
    with pytest.raises(ValueError, match="toy skip rule 'room' is already registered"):
        rules.rule("room")(_paint)


def _sample(item: Item) -> Sample:
    return Sample(id=item.id, input=f"{item.color}?", target=item.color)


def test_selection_splits_runnable_and_skipped_and_counts_both() -> None:
    chosen = Selection.of(ITEMS, sample=_sample, reason=lambda t: "too big" if t.size == "large" else None)
    assert [s.id for s in chosen.samples] == ["a", "d"]
    assert chosen.skipped == {"b": "too big", "c": "too big"} and chosen.n_total == 4
    assert [s.id for s in chosen.runnable("toys")] == ["a", "d"]


def test_nothing_runnable_is_one_usage_error_listing_every_reason() -> None:
    skipped = {f"t{i}": f"reason {i}" for i in range(30)}
    with pytest.raises(NothingRunnableError) as raised:
        Selection([], skipped, hint="install the paint").runnable("toys")
    error = raised.value
    assert isinstance(error, UsageError) and error.exit_code == 2 and error.hint == "install the paint"
    message = str(error)
    assert message.startswith("none of the 30 chosen toys tasks can run here:")
    assert "  - t24: reason 24" in message and "t25:" not in message and "... and 5 more" in message
    assert str(NothingRunnableError("toys", {})).startswith("no toys task was chosen")


def _toy_selection(data_dir: Path | None = None, color: str | None = None) -> Selection:
    chosen = [t for t in ITEMS if color is None or t.color == color]
    return Selection.of(chosen, sample=_sample, reason=lambda t: "large" if t.size == "large" else None)


def _toy_task(seed: int = 0, harness: str = "react", color: str | None = None, max_tokens: int = 7) -> Task:
    return benchmark_task(
        "toys",
        _toy_selection(color=color),
        seed=seed,
        harness=harness,
        agent=lambda chosen: generate(),
        scorer=includes(),
        config=GenerateConfig(max_tokens=max_tokens, temperature=0.5),
        time_limit=30,
        metadata={"variant": "v1"},
    )


class Toys(Benchmark):
    name = "toys"
    description = "test benchmark"
    select_function = _toy_selection
    task_function = _toy_task
    judge = JudgeSetup(prompts=("Grade {answer}.",), origin="ours: a test prompt", max_tokens=64)


def test_load_skipped_and_the_task_take_the_same_options_through_one_selection() -> None:
    toys = Toys()
    # options the selection does not take (the reply cap) are left out of it
    chosen = toys.selection(None, color="red", max_tokens=3)
    assert chosen.n_total == 2 and chosen.skipped == {"c": "large"}
    assert [s.id for s in toys.load(color="red", max_tokens=3)] == ["a"]
    assert toys.skipped(color="red") == {"c": "large"} and toys.skipped() == {"b": "large", "c": "large"}
    task = toys.task(seed=11, harness="react", color="red", max_tokens=3)
    assert [s.id for s in task.dataset] == ["a"]
    with pytest.raises(NothingRunnableError, match="none of the 1 chosen toys tasks"):
        toys.load(color="blue")


def test_benchmark_task_owns_the_harness_lookup_the_seed_and_the_metadata() -> None:
    task = _toy_task(seed=42, max_tokens=9)
    assert task.config.seed == 42 and task.config.max_tokens == 9 and task.config.temperature == 0.5
    assert task.metadata == {"benchmark": "toys", "seed": 42, "harness": "react", "variant": "v1"}
    assert task.name == "toys" and task.dataset.name == "toys" and task.time_limit == 30
    with pytest.raises(UnknownNameError, match="unknown harness 'nope'"):
        _toy_task(harness="nope")
    with pytest.raises(NothingRunnableError):
        _toy_task(color="blue")


def test_one_judge_home_feeds_results_json_and_the_protocol_record() -> None:
    setup = JudgeSetup(prompts=("system", "user {x}"), origin="ours: our wording", max_tokens=64)
    expected = hashlib.sha256(b"system\0user {x}\0").hexdigest()  # each template followed by a NUL
    assert setup.prompt_sha256 == expected
    info = setup.info()
    assert info["prompt_sha256"] == expected and info["settings"] == {"temperature": 0.0, "max_tokens": 64}
    assert setup.config(max_tokens=8).max_tokens == 8
    model, prompt = setup.elements("openai/gpt-4o", "openai/gpt-4o")
    assert model.element == "judge_model" and model.same
    assert prompt.element == "judge_prompt" and not prompt.same
    assert isinstance(prompt.official, NotRecorded) and isinstance(prompt.ours, Ours)
    assert prompt.ours.sha256 == expected


def test_the_default_protocol_record_carries_the_judge_and_is_not_comparable() -> None:
    toys = Toys()
    assert toys.judge_info("any")["prompt_sha256"] == toys.judge.prompt_sha256  # type: ignore[union-attr]
    record = toys.protocol(RunUsed(harness="react", judge_model="openai/gpt-4o"))
    assert isinstance(record, ProtocolRecord) and record.comparable is False
    assert {e.element for e in record.elements} == {"agent_sampling", "judge_model", "judge_prompt"}
    assert record.reasons[0] == toys.protocol_pending
