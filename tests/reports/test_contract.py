"""The results.json contract: the report reads what the analysis and the runner write, unchanged."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from forge_eval import ForgeError
from forge_eval.analysis import summarize_trials
from forge_eval.reports import SectionRegistry, build_report
from forge_eval.rundir import RunResults, load_results, write_results
from tests.reports import _synthetic as syn
from tests.reports._tree import parse


def test_headline_shows_summarize_trials_output(tmp_path: Path) -> None:
    rows = syn.trial_rows()
    trials = pd.DataFrame(rows).assign(
        seed=lambda f: f["seed"].astype(int),
        epoch=lambda f: f["epoch"].astype(int) + 1,  # Inspect epochs are 1-based
        score=lambda f: pd.to_numeric(f["score"].replace("", None)),
        passed=lambda f: f["passed"] == "true",
    )
    summaries = summarize_trials(trials, epochs=syn.EPOCHS, graded=True, n_resamples=300)
    metrics = json.loads(json.dumps({name: s.to_dict() for name, s in summaries.items()}))
    run_dir = syn.write_run(tmp_path / "r", syn.results(metrics=metrics), rows)
    doc = parse(build_report(run_dir, sections=SectionRegistry(group="forge_eval.tests.none")).read_text())
    table = doc.find("table", cls="headline")
    shown = {r.attrs["data-metric"]: r for r in table.find("tbody").find_all("tr")}
    assert list(shown) == ["success_rate", "pass@2", "pass^2", "mean_score"]
    for name, row in shown.items():
        summary = summaries[name]
        cells = [td.text() for td in row.find_all("td")]
        assert cells[0] == f"{100 * summary.estimate:.1f}%"
        assert cells[1] == f"[{100 * summary.ci_low:.1f}%, {100 * summary.ci_high:.1f}%]"
        assert cells[3:] == [str(summary.n_tasks), str(summary.n_trials)]
        assert row.find("abbr").attrs["title"] == summary.estimator
    assert table.find("thead").find_all("th")[2].text() == f"{100 * summary.confidence_level:g}% CI"


def test_results_written_by_the_schema_load_back_unchanged(tmp_path: Path) -> None:
    raw = syn.results(
        judge={"model": "m", "role": "judge", "settings": {"t": 0}, "comparable": False},
        subset={"n_total": 6, "n_run": 5, "skipped": [{"task_id": "web", "reason": "live web"}]},
        reference={"scores": {"success_rate": 0.4}, "source": "paper"},
        step_budget={"max_steps": 30},  # a block this version does not know survives as recorded
    )
    written = write_results(tmp_path, RunResults.model_validate(raw))
    loaded = load_results(tmp_path)
    assert json.loads(written.read_text()) == json.loads(loaded.model_dump_json())
    assert loaded.judge is not None and loaded.judge.settings == {"t": 0} and not loaded.judge.comparable
    assert loaded.subset is not None and loaded.subset.skipped[0].reason == "live web"
    assert loaded.extra["step_budget"] == {"max_steps": 30}
    assert [m.name for m in loaded.metric_list] == ["success_rate", "pass@2", "pass^2", "mean_score"]
    assert not list(tmp_path.glob(".*"))  # the temporary file was renamed into place


def test_bad_optional_blocks_are_listed_with_their_paths(tmp_path: Path) -> None:
    raw = syn.results(
        judge={"model": "m", "role": "judge"},
        subset={"n_total": 6, "n_run": "5", "skipped": [{"task_id": "web"}]},
        reference={"scores": {"success_rate": "high"}},
    )
    syn.write_run(tmp_path, raw)
    with pytest.raises(ForgeError) as info:
        load_results(tmp_path)
    message = info.value.message
    assert "'judge.comparable' is missing" in message
    assert "'subset.n_run' must be an integer, got \"5\"" in message
    assert "'subset.skipped[0].reason' is missing" in message
    assert "'reference.scores.success_rate' must be a number, got \"high\"" in message
