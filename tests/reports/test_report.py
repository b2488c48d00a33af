"""The report's content, parsed back from the HTML the way a browser reads it."""

from __future__ import annotations

import csv
import re
import shlex
from pathlib import Path

import pytest

from forge_eval.reports import SectionRegistry, build_report
from forge_eval.rundir import RunDir
from tests.reports import _synthetic as syn
from tests.reports._tree import Node, parse


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # A space in the path checks that the printed shell commands quote it.
    return syn.write_run(tmp_path_factory.mktemp("reports") / "run one")


@pytest.fixture(scope="module")
def markup(run_dir: Path) -> str:
    # An empty registry: these tests look at the built-in sections only.
    path = build_report(run_dir, sections=SectionRegistry(group="forge_eval.tests.none"))
    assert path == RunDir(run_dir).report
    return path.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def doc(markup: str) -> Node:
    return parse(markup)


def test_headline_lists_metrics_in_order_with_formatted_estimates_and_cis(doc: Node) -> None:
    rows = doc.find("table", cls="headline").find("tbody").find_all("tr")
    assert [r.attrs["data-metric"] for r in rows] == ["success_rate", "pass@2", "pass^2", "mean_score"]
    header = [th.text() for th in doc.find("table", cls="headline").find("thead").find_all("th")]
    assert header == ["Metric", "Estimate", "95% CI", "Per seed", "Tasks", "Trials"]
    cells = {r.attrs["data-metric"]: [c.text().strip() for c in r.find_all("td")] for r in rows}
    assert cells["success_rate"] == ["55.5%", "[41.7%, 70.0%]", "11: 50.0%, 22: 70.0%, 33: 60.0%", "5", "28"]
    assert cells["pass@2"][:2] == ["80.0%", "[60.0%, 100.0%]"]
    assert cells["pass^2"][:2] == ["20.0%", "[0.0%, 40.0%]"]
    assert cells["mean_score"][:2] == ["51.2%", "[40.0%, 62.5%]"]
    assert rows[0].find("td", cls="ci").attrs["title"] == "standard error 7.1 percentage points"
    assert "title" not in rows[1].find("td", cls="ci").attrs


def test_confidence_levels_other_than_95_are_labelled(tmp_path: Path) -> None:
    metrics = {name: {**m, "confidence_level": 0.9} for name, m in syn.METRICS.items()}
    run_dir = syn.write_run(tmp_path / "r90", syn.results(metrics=metrics))
    doc = parse(build_report(run_dir, sections=SectionRegistry(group="forge_eval.tests.none")).read_text())
    assert doc.find("table", cls="headline").find_all("th")[2].text() == "90% CI"
    assert "90% CI" in doc.find("svg", **{"data-chart": "seeds"}).text()
    metrics["pass@2"] = {**metrics["pass@2"], "confidence_level": 0.8}
    syn.write_run(run_dir, syn.results(metrics=metrics))
    doc = parse(build_report(run_dir, sections=SectionRegistry(group="forge_eval.tests.none")).read_text())
    assert doc.find("table", cls="headline").find_all("th")[2].text() == "CI"
    ci = {
        r.attrs["data-metric"]: r.find("td", cls="ci").text()
        for r in doc.find("table", cls="headline").find("tbody").find_all("tr")
    }
    assert ci["pass@2"] == "80% [60.0%, 100.0%]" and ci["success_rate"] == "90% [41.7%, 70.0%]"


def test_errored_trials_are_counted_above_the_headline(doc: Node) -> None:
    # 28 trials recorded (2 never ran), one errored
    assert doc.find("p", id="errored-note").text().startswith("⚠ 1 of 28 trials errored (3.6%)")


def test_estimators_are_tooltips_and_footnotes(doc: Node) -> None:
    table = doc.find("table", cls="headline")
    titles = [a.attrs["title"] for a in table.find_all("abbr")]
    assert titles[0] == syn.METRICS["success_rate"]["estimator"]
    assert titles[2] == "unbiased pass^k & co <b>"  # escaped in the file, intact once parsed
    notes = [li.text() for li in doc.find("ol", cls="footnotes").find_all("li")]
    assert len(notes) == 4 and notes[2] == "[c] unbiased pass^k & co <b>"
    assert not table.find_all("b")


def test_seed_chart_places_one_point_per_metric_and_seed_in_estimate_order(doc: Node) -> None:
    chart = doc.find("svg", **{"data-chart": "seeds"})
    points = chart.ids_matching(r"seeds-seed-\d+-\d+")
    assert len(points) == 4 * len(syn.SEEDS)
    # success_rate is row 0: seed 11 at 50%, 33 at 60%, 22 at 70% -> x increases in that order
    x = {seed: float(chart.find(id=f"seeds-seed-0-{seed}").find("use").attrs["x"]) for seed in syn.SEEDS}
    assert x[11] < x[33] < x[22]
    # the x axis is linear in the estimate: 60% sits 1/2 of the way from 50% to 70%
    assert (x[33] - x[11]) == pytest.approx((x[22] - x[11]) / 2, rel=1e-3)


def test_heatmap_has_one_cell_per_task_and_seed(doc: Node) -> None:
    heatmap = doc.find("svg", **{"data-chart": "heatmap"})
    cells = heatmap.ids_matching(r"heatmap-cell-\d+-\d+")
    assert len(cells) == len(syn.TASKS) * len(syn.SEEDS)


def _cell(doc: Node, task: str, seed: int) -> Node:
    heatmap = doc.find("svg", **{"data-chart": "heatmap"})
    return heatmap.find(id=f"heatmap-cell-{syn.TASKS.index(task)}-{syn.SEEDS.index(seed)}")


def test_heatmap_colours_encode_pass_fraction_and_mark_errors_and_gaps(doc: Node) -> None:
    def style(task: str, seed: int) -> str:
        return _cell(doc, task, seed).find("path").attrs["style"]

    # viridis endpoints (published constants): 0 -> #440154, 1 -> #fde725
    assert "fill: #fde725" in style("beta", 11)  # 2/2 passed
    assert "fill: #440154" in style(syn.SCRIPT_TASK, 11)  # 0/2 passed
    errored = style("beta", 22)
    assert re.search(r"fill: url\(#heatmap-[^)]+\)", errored), "errored cell should be hatched"
    assert "stroke: #d62728" in errored
    assert "url(" not in style("alpha", 22)
    assert "fill: #e6e6e6" in style(*syn.NOT_RUN)
    assert _cell(doc, "beta", 22).find("title").text() == "beta, seed 22: 1/2 passed, 1 errored"
    assert _cell(doc, *syn.NOT_RUN).find("title").text() == "delta, seed 33: no trial recorded"
    legend = doc.find("svg", **{"data-chart": "heatmap"}).text()
    assert "errored trial(s)" in legend and "no trial recorded" in legend


def test_task_table_matches_an_independent_count_of_trials_csv(run_dir: Path, doc: Node) -> None:
    with (run_dir / "trials.csv").open(newline="") as f:
        trials = list(csv.DictReader(f))
    table = doc.find("table", cls="tasks")
    header = [th.text().strip() for th in table.find("thead").find_all("th")]
    assert header == ["Task", "difficulty", "Seed 11", "Seed 22", "Seed 33", "Passed", "Mean score", "Errors"]
    rows = table.find("tbody").find_all("tr")
    assert [r.find("th").text() for r in rows] == syn.TASKS
    for row in rows:
        task = row.find("th").text()
        mine = [t for t in trials if t["task_id"] == task]
        values = [td.text().strip() for td in row.find_all("td")]
        for k, seed in enumerate(syn.SEEDS):
            of_seed = [t for t in mine if t["seed"] == str(seed)]
            passed = sum(t["passed"] == "true" for t in of_seed)
            errors = sum(bool(t["error"]) for t in of_seed)
            expected = f"{passed}/{len(of_seed)}" + (f" ⚠{errors}" if errors else "") if of_seed else "—"
            assert values[1 + k] == expected, (task, seed)
        scores = [float(t["score"]) for t in mine if t["score"]]
        assert values[-3] == f"{100 * sum(t['passed'] == 'true' for t in mine) / len(mine):.1f}%"
        assert values[-2] == f"{100 * sum(scores) / len(scores):.1f}%"
        assert values[-1] == str(sum(bool(t["error"]) for t in mine))
    beta_errors = rows[1].find_all("td")[-1]
    assert beta_errors.attrs["title"] == "SandboxTimeout: exceeded 600 s, <killed>"


def test_nothing_points_outside_the_file(markup: str, doc: Node) -> None:
    assert not doc.find_all("link") and not doc.find_all("img") and not doc.find_all("iframe")
    for node in doc.iter():
        for name, value in node.attrs.items():
            if name in ("src", "href", "xlink:href", "action", "data"):
                # in-page fragments, or inline data (the colour bar is an embedded PNG)
                assert value.startswith(("#", "data:image/png;base64,")), (node.tag, name, value[:40])
        for url in re.findall(r"url\(([^)]*)\)", node.attrs.get("style", "")):
            assert url.startswith("#"), url
    for style in doc.find_all("style"):
        assert all(u.startswith("#") for u in re.findall(r"url\(([^)]*)\)", style.text()))
    assert [s.attrs for s in doc.find_all("script")] == [{}]  # one inline script, no src
    # Nothing in this run's data is a URL, so no scheme may appear anywhere (DOCTYPE, xmlns, CDN).
    assert "http://" not in markup and "https://" not in markup and "//cdn" not in markup


def test_logs_section_gives_the_inspect_view_and_rebuild_commands(run_dir: Path, doc: Node) -> None:
    section = doc.find("section", id="logs")
    commands = [pre.text() for pre in section.find_all("pre")]
    logs = (run_dir / "logs").resolve()
    assert commands == [
        f"inspect view --log-dir {shlex.quote(str(logs))}",
        f"forge-eval report {shlex.quote(str(run_dir.resolve()))}",
    ]
    assert shlex.split(commands[0])[-1] == str(logs)  # pastes into a shell intact despite the space
    assert f"({len(syn.SEEDS)} .eval files)" in section.text()


def test_untrusted_text_is_escaped(markup: str, doc: Node) -> None:
    assert "<script>alert" not in markup
    assert all("alert" not in s.text() for s in doc.find_all("script"))
    table_tasks = [th.text() for th in doc.find("table", cls="tasks").find_all("th", cls="task")]
    assert syn.SCRIPT_TASK in table_tasks
    assert syn.SCRIPT_TASK in doc.find("svg", **{"data-chart": "heatmap"}).text()
    assert doc.find("title").text().startswith('forgelab · openai/tiny & "quoted" · react')
    assert "SandboxTimeout: exceeded 600 s, <killed>" not in markup


def test_metadata_and_partial_banner(doc: Node) -> None:
    banner = doc.find("div", id="partial-banner")
    assert "Partial run" in banner.text()
    assert "forge-eval run forgelab --seeds 3 --epochs 2 --out runs/r1" in banner.text()
    meta = {
        tr.find("th").text(): tr.find("td").text().strip()
        for tr in doc.find("table", cls="meta").find_all("tr")
    }
    assert meta["Status"] == "partial"
    assert meta["Git revision"] == "8cb9f9a0123456789"
    assert meta["Seeds"] == "11, 22, 33" and meta["Epochs"] == "2" and meta["Threshold"] == "0.5"
    assert meta["Created"] == "2026-11-29T11:00:00+00:00"
    assert "inspect_ai 0.3.285" in meta["Versions"] and "python 3.11.2" in meta["Versions"]
    assert meta["Command"] == "forge-eval run forgelab --seeds 3 --epochs 2 --out runs/r1"
    # fields the report does not know are still shown, as recorded
    assert meta["task_options"] == '{"quick": true, "subset": "<core>"}'


def test_complete_run_has_no_banner_and_rebuild_is_byte_identical(tmp_path: Path) -> None:
    rows = [{**row, "error": ""} for row in syn.trial_rows()]
    run_dir = syn.write_run(tmp_path / "done", syn.results(status="complete"), rows)
    empty = SectionRegistry(group="forge_eval.tests.none")
    first = build_report(run_dir, sections=empty).read_bytes()
    doc = parse(first.decode())
    assert not doc.find_all(id="partial-banner")
    assert not doc.find_all(id="errored-note")
    assert doc.find("header").find("span", cls="badge").text() == "complete"
    assert build_report(run_dir, sections=empty).read_bytes() == first
    assert not list(run_dir.glob(".*.tmp"))


def test_without_trials_csv_the_headline_is_still_reported(tmp_path: Path) -> None:
    run_dir = syn.write_run(tmp_path / "r")
    (run_dir / "trials.csv").unlink()
    doc = parse(build_report(run_dir, sections=SectionRegistry(group="forge_eval.tests.none")).read_text())
    assert doc.find("table", cls="headline")
    assert "No trials.csv" in doc.find("section", id="heatmap").text()
    assert not doc.find_all("svg", **{"data-chart": "heatmap"})


def test_metric_without_estimate_shows_na(tmp_path: Path) -> None:
    metrics = {
        "success_rate": {**syn.METRICS["success_rate"], "estimate": None, "ci_low": None, "ci_high": None}
    }
    run_dir = syn.write_run(tmp_path / "r", syn.results(metrics=metrics))
    doc = parse(build_report(run_dir, sections=SectionRegistry(group="forge_eval.tests.none")).read_text())
    row = doc.find("tr", **{"data-metric": "success_rate"})
    assert [td.text() for td in row.find_all("td")][:2] == ["n/a", "n/a"]


def test_trials_csv_with_a_header_only(tmp_path: Path) -> None:
    run_dir = syn.write_run(tmp_path / "r")
    (run_dir / "trials.csv").write_text("task_id,seed,epoch,score,passed,error\n")
    doc = parse(build_report(run_dir, sections=SectionRegistry(group="forge_eval.tests.none")).read_text())
    assert "trials.csv has no trials yet" in doc.find("section", id="heatmap").text()
    assert "trials.csv has no trials yet" in doc.find("section", id="tasks").text()


ODD_IDS = ["$x^2$ \\frac{a}{b}", "😀 emoji", "]]>&amp;", "x" * 300, 'quote" id="y', "7", "007"]


def test_odd_task_ids_survive_table_and_heatmap(tmp_path: Path, recwarn: pytest.WarningsRecorder) -> None:
    rows = [{**syn.trial_rows()[0], "task_id": task_id} for task_id in ODD_IDS]
    run_dir = syn.write_run(tmp_path / "r", rows=rows)
    doc = parse(build_report(run_dir, sections=SectionRegistry(group="forge_eval.tests.none")).read_text())
    assert [th.text() for th in doc.find("table", cls="tasks").find_all("th", cls="task")] == ODD_IDS
    heatmap = doc.find("svg", **{"data-chart": "heatmap"})
    assert len(heatmap.ids_matching(r"heatmap-cell-\d+-\d+")) == len(ODD_IDS) * len(syn.SEEDS)
    labels = [t.text() for t in heatmap.find_all("text")]
    assert "$x^2$ \\frac{a}{b}" in labels  # not rendered as mathtext
    assert 'quote" id="y' in labels and "x" * 47 + "…" in labels
    assert not [w for w in recwarn if "Glyph" in str(w.message)]
