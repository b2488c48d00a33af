"""`ClawEval`: the benchmark entry for `forge-eval run claweval`."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from inspect_ai.log import EvalLog

from forge_eval.benchmarks._benchmark import Benchmark, Card, OfficialSettings, RunUsed
from forge_eval.benchmarks.claweval import _protocol
from forge_eval.benchmarks.claweval._data import data_root, select_tasks
from forge_eval.benchmarks.claweval._judge import JUDGE, OFFICIAL_JUDGE
from forge_eval.benchmarks.claweval._summary import upstream_metrics
from forge_eval.benchmarks.claweval._task import DEFAULT_HARNESS, claweval
from forge_eval.rundir import ProtocolRecord

#: Upstream's pass line and trials per task (`score_summary.py`: PASS_THRESHOLD, EXPECTED_TRIALS).
PASS_THRESHOLD = 0.75
TRIALS = 3


class ClawEval(Benchmark):
    name = "claweval"
    description = "Claw-Eval: 300 assistant tasks on mock services (mail, calendar, CRM, ...); pass^3, pass@3"
    card = Card(
        runs_here=(
            "128 of 300 tasks (upstream's loop, mock services, sandbox, graders); the 63 live-web ones "
            "too with `SERP_DEV_KEY` exported online"
        ),
        comparable=(
            "not yet: judge/user models are the run's own, bubblewrap for Docker (its protocol record "
            "says)"
        ),
        needs="upstream's tree, its venv (setup), a judge model",
    )
    default_harness = DEFAULT_HARNESS
    accepts_data_dir = True
    official = OfficialSettings(
        trials=TRIALS,
        pass_threshold=PASS_THRESHOLD,
        graded=True,
        judge_role="judge",
        judge_model=OFFICIAL_JUDGE,
        paper_scores={"pass^3": 0.317, "pass@3": 0.559},
        paper_source="OpenForgeRL (arXiv 2607.21557), ClawEval after RL; subset used there unverified",
    )
    judge = JUDGE
    select_function = select_tasks
    task_function = claweval

    def judge_info(self, judge_model: str) -> dict[str, Any]:
        """No prompt hash here: the judge's prompts are upstream's code, hashed from the tree the run read
        in the protocol record's judge-prompt element."""
        return {k: v for k, v in super().judge_info(judge_model).items() if k != "prompt_sha256"}

    def protocol(self, run: RunUsed) -> ProtocolRecord:
        return _protocol.protocol(run)

    def upstream_metrics(
        self, logs: list[EvalLog], ours: Mapping[str, Mapping[str, Any]], data_dir: Path | None
    ) -> dict[str, dict[str, Any]]:
        """Score, pass line, pass^3 and pass@3 from upstream's own `score_summary.py` (`_summary.py`)."""
        return upstream_metrics(data_root(data_dir), logs, ours)
