"""MCP-Atlas's protocol record: upstream's loop, judge prompt, grader and data read from the pinned tree
match the pinned sha256s; a changed judge prompt in the tree is caught; the environment (servers that
need the web left out) keeps every offline run not comparable, with the reason."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from forge_eval.benchmarks import BENCHMARKS
from forge_eval.benchmarks._benchmark import RunUsed
from forge_eval.benchmarks.mcpatlas import OFFICIAL_JUDGE

TASK = "6888e207a34beb25cfedda3b"


def _record(tree: Path, harness: str = "atlas-loop"):  # type: ignore[no-untyped-def]
    run = RunUsed(
        harness=harness,
        task_args={"data_dir": str(tree), "subset": "paper"},
        judge_model=OFFICIAL_JUDGE,
        task_ids=(TASK,),
        data_dir=tree,
    )
    return BENCHMARKS.get("mcpatlas").protocol(run)


def test_upstreams_elements_match_and_the_environment_is_why_not_comparable(upstream_trees: Path) -> None:
    record = _record(upstream_trees / "scaleapi+mcp-atlas@b290e67")
    matching = {e.name for e in record.elements if e.matches}
    assert {
        "harness, version and configuration",
        "agent prompt",
        "agent sampling settings",
        "judge model",
        "judge prompt",
        "grader code",
        "environment: seeded /data",
        "data revision and checksum",
    } <= matching
    assert record.comparable is False
    reasons = " | ".join(record.reasons)
    assert "environment: MCP servers differs" in reasons and "task set" in reasons  # 1 of 10 ran here
    assert len(record.reasons) == 2
    # the methodology pinned is named: v1's Python harness, 20 turns, its judge; never 2.0's leaderboard
    (harness,) = record.of("harness")
    assert harness.note and "before 2.0" in harness.note and "20 turns" in harness.note
    assert "100 tool calls" in harness.note and "google/gemini-2.5-pro" in harness.note


@pytest.mark.slow
def test_a_changed_judge_prompt_or_another_harness_is_recorded(upstream_trees: Path, tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    shutil.copytree(upstream_trees / "scaleapi+mcp-atlas@b290e67", tree)
    scores = tree / "services/mcp_eval/mcp_evals_scores.py"
    scores.chmod(0o644)
    scores.write_text(scores.read_text().replace("Be rigorous but fair", "Be lenient"))
    record = _record(tree)
    [prompt] = record.of("judge_prompt")
    assert not prompt.matches and not record.of("grader")[0].matches
    assert record.of("harness")[0].matches  # the loop's code is untouched
    other = _record(upstream_trees / "scaleapi+mcp-atlas@b290e67", harness="react")
    assert not other.of("harness")[0].matches and not other.of("agent_prompt")[0].matches
