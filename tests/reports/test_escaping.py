"""Property: any text from a run (task ids, metadata, errors, model names) comes back as the same text."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from forge_eval.reports._core import headline, metadata, task_table
from forge_eval.reports._page import page
from forge_eval.reports._trials import Cell, TaskOutcomes, TaskRow
from forge_eval.rundir import MetricResult, RunResults, SeedEstimate
from tests.reports._tree import parse

# Any characters but controls and lone surrogates (which cannot be written as UTF-8 at all).
TEXT = st.text(st.characters(blacklist_categories=("Cc", "Cs")), min_size=1, max_size=40)


@settings(max_examples=150, deadline=None)
@given(task_id=TEXT, category=TEXT, error=TEXT, model=TEXT, estimator=TEXT, command=TEXT)
def test_text_round_trips_through_the_html(
    task_id: str, category: str, error: str, model: str, estimator: str, command: str
) -> None:
    metric = MetricResult(
        estimate=0.5,
        ci_low=0.25,
        ci_high=0.75,
        per_seed=[SeedEstimate(seed=0, estimate=0.5)],
        n_tasks=1,
        n_trials=2,
        estimator=estimator,
    )
    results = RunResults(
        benchmark="bench",
        model=model,
        harness="react",
        seeds=[0],
        epochs=2,
        status="partial",
        metrics={"success_rate": metric},
        command=command,
    ).at(Path("/runs/r"))
    task = TaskRow(task_id, (Cell(2, 1, 1),), 0.5, 2, 1, 1, (error,), {"category": category})
    outcomes = TaskOutcomes((0,), (task,), ("category",))
    sections = [headline(results, outcomes), task_table(outcomes), metadata(results)]
    doc = parse(page(results, sections, "forge-eval test"))

    assert len(doc.find_all("script")) == 1 and not doc.find("script").attrs
    row = doc.find("table", cls="tasks").find("tbody").find("tr")
    assert row.find("th").text() == task_id
    assert row.find_all("td")[0].text() == category
    assert row.find_all("td")[-1].attrs["title"] == error
    assert doc.find("table", cls="headline").find("abbr").attrs["title"] == estimator
    meta = {tr.find("th").text(): tr.find("td") for tr in doc.find("table", cls="meta").find_all("tr")}
    assert meta["Model"].text() == model
    assert meta["Command"].text() == command
    assert doc.find("div", id="partial-banner").find("pre").text() == command
