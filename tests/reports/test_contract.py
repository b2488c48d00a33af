"""The report reads what the analysis package writes: metrics from `summarize_trials`, unchanged."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from forge_eval.analysis import summarize_trials
from forge_eval.reports import SectionRegistry, build_report
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
