"""The report's Noise floor and Cost sections: numbers as results.json holds them, text escaped, and an
older results.json without the blocks said to be unrecorded (not shown as zeros)."""

from pathlib import Path

import numpy as np
import pandas as pd

from forge_eval.analysis import attempt_cost, cost_summary, noise_floor, run_coverage
from forge_eval.reports import build_report
from tests.analysis._behavior_logs import eval_log, sample, turn
from tests.reports import _synthetic as syn
from tests.reports._tree import parse


def _blocks() -> dict:
    rng = np.random.default_rng(1)
    rows = [
        {"task_id": f"t{t}", "seed": s, "epoch": 1, "score": float(v), "passed": bool(v), "error": ""}
        for t in range(8)
        for s in range(3)
        for v in [rng.uniform() < 0.5]
    ]
    rows[0].update(score=float("nan"), passed=False, error="SandboxTimeout: <killed> after 600 s")
    trials = pd.DataFrame(rows)
    log = eval_log([], seed=0, harness="react")
    attempts = [attempt_cost(log, sample("t0", [turn(text="done")])) for _ in range(2)]
    for i, row in enumerate(attempts):
        row["attempt"] = f"a{i}"
    return {
        "noise_floor": noise_floor(trials, epochs=1, graded=False),
        "coverage": run_coverage(trials, 3, 1),
        "cost": cost_summary(attempts),
    }


def test_the_sections_show_the_recorded_numbers_escaped(tmp_path: Path) -> None:
    blocks = _blocks()
    doc = parse(build_report(syn.write_run(tmp_path, syn.results(**blocks))).read_text())
    floor = doc.find("section", id="noise-floor").text()
    assert f"{100 * blocks['noise_floor']['mdd']:.1f} pp" in floor
    assert f"{blocks['noise_floor']['n_tasks_flipped']} of 8" in floor
    assert "23 of 24 attempted trials scored" in floor
    assert "1 × SandboxTimeout" in floor  # the failure's kind, its message on hover
    assert "<killed>" in doc.find("ul", cls="failures").find("code").attrs["title"]
    cost = doc.find("section", id="cost").text()
    assert "2 attempts, 1 trials, 1 retried" in cost


def test_an_older_results_json_says_the_blocks_were_not_recorded(tmp_path: Path) -> None:
    doc = parse(build_report(syn.write_run(tmp_path)).read_text())
    assert "has no noise floor" in doc.find("section", id="noise-floor").text()
    assert "has no coverage" in doc.find("section", id="noise-floor").text()
    assert "has no cost" in doc.find("section", id="cost").text()
