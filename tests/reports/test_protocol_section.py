"""The report's Protocol section and the headline's not-comparable note, from results.json's record."""

from __future__ import annotations

from pathlib import Path

from forge_eval.reports import SectionRegistry, build_report
from forge_eval.rundir import ELEMENTS, NotUsed, Ours, ProtocolRecord, Upstream, Value, element
from tests.reports import _synthetic as syn
from tests.reports._tree import Node, parse

_NONE = SectionRegistry(group="forge_eval.tests.none")
PROMPT = Upstream.text(
    "<system> prompt & rules", repo="claw-eval/claw-eval", commit="9365e1a", path="src/prompt.py"
)


def _report(tmp_path: Path, protocol: ProtocolRecord | None) -> Node:
    data = syn.results()
    if protocol is not None:
        data["protocol"] = protocol.model_dump(mode="json")
    run = syn.write_run(tmp_path / "run", data)
    return parse(build_report(run, sections=_NONE).read_text())


def _record(**changes: object) -> ProtocolRecord:
    elements = {kind: element(kind, NotUsed(why="not part of it")) for kind in ELEMENTS}
    elements["agent_prompt"] = element("agent_prompt", PROMPT)
    elements.update(changes)
    return ProtocolRecord(elements=list(elements.values()))


def test_protocol_table_lists_every_element_with_both_sides(tmp_path: Path) -> None:
    doc = _report(tmp_path, _record())
    section = doc.find("section", id="protocol")
    assert "Comparable: every element" in section.find("p", id="protocol-verdict").text()
    rows = section.find("table", cls="protocol").find("tbody").find_all("tr")
    assert [r.attrs["data-element"] for r in rows] == list(ELEMENTS)
    prompt = next(r for r in rows if r.attrs["data-element"] == "agent_prompt")
    cells = [c.text() for c in prompt.find_all("td")]
    assert cells[0].startswith("claw-eval/claw-eval@9365e1a:src/prompt.py") and cells[0] == cells[1]
    assert cells[2] == "same"
    assert doc.find_all("div", id="protocol-note") == []


def test_a_differing_element_makes_the_headline_say_not_comparable(tmp_path: Path) -> None:
    ours = Ours.text("our paraphrase <b>", "You are an assistant.")
    doc = _report(tmp_path, _record(judge_prompt=element("judge_prompt", PROMPT, ours)))
    note = doc.find("div", id="protocol-note").text()
    assert "Not comparable with the benchmark's published scores" in note
    assert "judge prompt differs: official claw-eval/claw-eval@9365e1a:src/prompt.py" in note
    assert "this run ours: our paraphrase <b>" in note  # escaped in the markup, text as written
    row = doc.find("tr", **{"data-element": "judge_prompt"})
    assert row.find_all("td")[2].text() == "differs"


def test_a_pending_record_and_a_missing_one_are_not_comparable(tmp_path: Path) -> None:
    pending = ProtocolRecord(
        elements=[element("judge_model", Value(value="openai/gpt-4o"))],
        pending="protocol record not yet filled: judge and agent prompts are ours",
    )
    doc = _report(tmp_path / "pending", pending)
    assert "judge and agent prompts are ours" in doc.find("div", id="protocol-note").text()
    assert "Not comparable" in doc.find("p", id="protocol-verdict").text()
    old = _report(tmp_path / "old", None)
    assert "no protocol record" in old.find("section", id="protocol").text()
