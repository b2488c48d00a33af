"""Extra report sections: registered in code or advertised as entry points."""

from __future__ import annotations

import html
import json
from pathlib import Path

import pytest

from forge_eval import reports
from forge_eval.reports import REPORT_SECTIONS, Section, SectionRegistry, build_report
from tests.reports import _synthetic as syn
from tests.reports._tree import parse

CORE = ["headline", "protocol", "seeds", "noise-floor", "cost", "heatmap", "tasks", "metadata", "logs"]


def _section_ids(run_dir: Path, registry: SectionRegistry) -> list[str]:
    doc = parse(build_report(run_dir, sections=registry).read_text())
    return [s.attrs["id"] for s in doc.find_all("section")]


def test_registered_sections_follow_the_core_in_registration_order(tmp_path: Path) -> None:
    run_dir = syn.write_run(tmp_path / "r")
    (run_dir / "behavior.json").write_text('{"verifies writes": 0.75, "<tool>": 0.5}')
    registry = SectionRegistry(group="forge_eval.tests.none")

    @registry.register("zeta")  # registered first although it sorts last
    def zeta(run_dir: Path) -> Section:
        return Section("Zeta", "<p>z</p>")

    @registry.register("behavior")
    def behavior(run_dir: Path) -> Section | None:
        path = run_dir / "behavior.json"
        if not path.is_file():
            return None
        rows = "".join(
            f"<tr><td>{html.escape(k)}</td><td>{v:.1%}</td></tr>"
            for k, v in json.loads(path.read_text()).items()
        )
        return Section("Behavior", f'<table class="behavior">{rows}</table>')

    @registry.register("absent")
    def absent(run_dir: Path) -> None:
        return None

    doc = parse(build_report(run_dir, sections=registry).read_text())
    ids = [s.attrs["id"] for s in doc.find_all("section")]
    assert ids == CORE + ["section-zeta", "section-behavior"]
    table = doc.find("section", id="section-behavior").find("table", cls="behavior")
    assert [td.text() for td in table.find_all("td")] == ["verifies writes", "75.0%", "<tool>", "50.0%"]
    nav = [a.text() for a in doc.find("nav").find_all("a")]
    assert nav[-2:] == ["Zeta", "Behavior"]
    assert [a.attrs["href"] for a in doc.find("nav").find_all("a")][-1] == "#section-behavior"


def test_a_failing_section_becomes_a_warning_and_the_report_is_still_written(tmp_path: Path) -> None:
    run_dir = syn.write_run(tmp_path / "r")
    registry = SectionRegistry(group="forge_eval.tests.none")
    registry.register("broken", lambda run_dir: 1 / 0)
    registry.register("wrong-type", lambda run_dir: "<p>not a Section</p>")
    registry.register("fine", lambda run_dir: Section("Fine", "<p>ok</p>", anchor="fine"))
    doc = parse(build_report(run_dir, sections=registry).read_text())
    assert [s.attrs["id"] for s in doc.find_all("section")][len(CORE) :] == [
        "section-broken",
        "section-wrong-type",
        "fine",
    ]
    broken = doc.find("section", id="section-broken").find("p", cls="warning").text()
    assert "broken" in broken and "ZeroDivisionError" in broken
    assert "not a Section" in doc.find("section", id="section-wrong-type").text()
    assert doc.find("table", cls="headline")


def test_installed_entry_points_are_loaded_after_code_registrations(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A real (tiny) installed distribution on sys.path, found by importlib.metadata like any other.
    site = tmp_path / "site"
    (site / "forge_report_plugin_demo-0.1.dist-info").mkdir(parents=True)
    (site / "forge_report_plugin_demo-0.1.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: forge-report-plugin-demo\nVersion: 0.1\n"
    )
    (site / "forge_report_plugin_demo-0.1.dist-info" / "entry_points.txt").write_text(
        "[forge_eval.tests.plugins]\n"
        "plugin = forge_report_plugin_demo:section\n"
        "broken-plugin = forge_report_plugin_missing:section\n"
    )
    (site / "forge_report_plugin_demo.py").write_text(
        "from forge_eval.reports import Section\n\n"
        "def section(run_dir):\n"
        "    return Section('Plugin', '<p>from ' + run_dir.name + '</p>')\n"
    )
    monkeypatch.syspath_prepend(str(site))
    registry = SectionRegistry(group="forge_eval.tests.plugins")
    registry.register("in-code", lambda run_dir: Section("In code", "<p>x</p>"))
    run_dir = syn.write_run(tmp_path / "r")
    doc = parse(build_report(run_dir, sections=registry).read_text())
    ids = [s.attrs["id"] for s in doc.find_all("section")][len(CORE) :]
    assert ids == ["section-in-code", "section-broken-plugin", "section-plugin"]
    assert doc.find("section", id="section-plugin").text() == "Pluginfrom r"
    warning = doc.find("section", id="section-broken-plugin").text()
    assert "forge_report_plugin_missing:section" in warning and "ModuleNotFoundError" in warning
    assert registry.names() == ["broken-plugin", "in-code", "plugin"]


def test_the_default_registry_is_a_section_registry_of_the_documented_group() -> None:
    assert isinstance(REPORT_SECTIONS, SectionRegistry)
    assert REPORT_SECTIONS.group == "forge_eval.report_sections"
    assert "forge_eval.report_sections" in (reports.__doc__ or "")


def test_duplicate_names_are_refused() -> None:
    registry = SectionRegistry(group="forge_eval.tests.none")
    registry.register("x", lambda run_dir: None)
    with pytest.raises(ValueError, match="already registered"):
        registry.register("x", lambda run_dir: None)
