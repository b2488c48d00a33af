"""Upstream's own `score_summary.py` on a run's traces (exported in upstream's layout): its pass line and
its padding of missing trials with 0 up to 3; results.json's Claw-Eval metrics are its figures."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalError, EvalLog
from inspect_ai.model import ChatMessage, GenerateConfig, ModelOutput, get_model

from forge_eval.benchmarks.claweval import ClawEval, claweval
from forge_eval.benchmarks.claweval.__main__ import main as claweval_main
from tests.benchmarks.claweval.test_claweval_parity import lister
from tests.benchmarks.claweval.test_claweval_upstream import (
    T002_ANSWER,
    T002_IDS,
    ScriptedAgent,
    reading_judge,
)

pytestmark = pytest.mark.slow


def by_task(
    messages: list[ChatMessage], tools: Any, tool_choice: Any, config: GenerateConfig
) -> ModelOutput:
    """T002 triaged right (every trial passes), any other task only listed (no trial passes)."""
    if "gmail_get_message" in [t.name for t in tools]:
        steps = [("gmail_list_messages", {}), *[("gmail_get_message", {"message_id": i}) for i in T002_IDS]]
        answer = "\n".join(f"{i}: {c}" for i, c in T002_ANSWER.items())
        return ScriptedAgent(steps, answer)(messages, tools, tool_choice, config)
    return lister(messages, tools, tool_choice, config)


def summary(python: Path, tree: Path, traces: Path) -> tuple[float, str, str, str]:
    """AvgScore, AvgPass, AnyPass, AllPass of upstream's leaderboard line."""
    done = subprocess.run(
        [str(python), str(tree / "score_summary.py"), str(traces)],
        cwd=tree, capture_output=True, text=True, check=True,
    )
    line = r"^\S+\s+(\d+)\s+([0-9.]+)\s+\S+\s+(\d+/\d+)\s+(\d+/\d+)\s+(\d+/\d+)"
    row = re.search(line, done.stdout, re.MULTILINE)
    assert row, done.stdout
    return float(row.group(2)), row.group(3).replace(" ", ""), row.group(4), row.group(5)


def test_upstreams_score_summary_reads_our_traces(
    claweval_tree: Path, claweval_python: Path, tmp_path: Path
) -> None:
    tasks = "T002_email_triage,T010_contact_lookup"
    (log,) = inspect_eval(
        claweval(task_ids=tasks, data_dir=str(claweval_tree), sandbox="none"),
        model=get_model("mockllm/model", custom_outputs=by_task),
        model_roles={"judge": get_model("mockllm/model", custom_outputs=reading_judge)},
        epochs=3, display="none", log_dir=str(tmp_path / "logs"),
    )
    assert log.status == "success", log.error
    scores = {}
    for sample in log.samples or []:
        scores.setdefault(str(sample.id), []).append(sample.scores["claweval_scorer"].value)
    assert scores["T002_email_triage"] == [1.0, 1.0, 1.0] and max(scores["T010_contact_lookup"]) < 0.75
    assert claweval_main(["traces", str(tmp_path / "logs"), str(tmp_path / "traces")]) == 0
    (folder,) = (tmp_path / "traces").glob("*/*")
    mean = (sum(scores["T002_email_triage"]) + sum(scores["T010_contact_lookup"])) / 6
    assert summary(claweval_python, claweval_tree, tmp_path / "traces") == (
        pytest.approx(mean, abs=5e-4), "1/2", "1/2", "1/2",
    )
    # results.json's metrics are what upstream's summary computes (called in its venv, not re-derived)
    ours = {"mean_score": {"estimate": mean, "ci_low": 0.1, "ci_high": 0.9}, "pass^3": {"estimate": 0.25}}
    metrics = ClawEval().upstream_metrics([log], ours, claweval_tree)
    assert {name: m["estimate"] for name, m in metrics.items()} == {
        "mean_score": pytest.approx(mean, abs=1e-12), "pass^3": 0.5, "pass@3": 0.5, "avg_pass": 0.5,
    }
    assert "score_summary.py" in metrics["pass^3"]["estimator"]
    # our interval is kept only where our estimate is upstream's
    assert (metrics["mean_score"]["ci_low"], metrics["pass^3"]["ci_low"]) == (0.1, None)
    # an errored trial (no graded trace) is padded as upstream pads it: T002 no longer passes all 3
    failed = errored(log, "T002_email_triage")
    metrics = ClawEval().upstream_metrics([failed], {}, claweval_tree)
    assert metrics["pass^3"]["estimate"] == 0.0 and metrics["pass@3"]["estimate"] == 0.5
    assert metrics["mean_score"]["estimate"] == pytest.approx(mean - 1 / 6, abs=1e-12)
    assert metrics["mean_score"]["n_trials"] == 5
    # a missing trial counts as 0: T002 no longer passes all 3, its average drops by a third
    next(folder.glob("T002_email_triage_*.jsonl")).unlink()
    avg, _, any_pass, all_pass = summary(claweval_python, claweval_tree, tmp_path / "traces")
    assert (any_pass, all_pass) == ("1/2", "0/2") and avg == pytest.approx(mean - 1 / 6, abs=5e-4)


def errored(log: EvalLog, task_id: str) -> EvalLog:
    """`log` with the first trial of `task_id` ended in an error before upstream graded it."""
    samples = [s.model_copy() for s in log.samples or []]
    first = next(i for i, s in enumerate(samples) if s.id == task_id)
    error = EvalError(message="driver failed", traceback="", traceback_ansi="")
    samples[first] = samples[first].model_copy(update={"store": {}, "error": error})
    return log.model_copy(update={"samples": samples})
