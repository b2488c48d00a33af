"""`ClawEval`: the benchmark entry for `forge-eval run claweval`."""

from __future__ import annotations

from forge_eval.benchmarks._benchmark import Benchmark, OfficialSettings
from forge_eval.benchmarks.claweval._data import select_tasks
from forge_eval.benchmarks.claweval._judge import JUDGE, OFFICIAL_JUDGE
from forge_eval.benchmarks.claweval._scoring import PASS_THRESHOLD, TRIALS
from forge_eval.benchmarks.claweval._task import DEFAULT_HARNESS, claweval


class ClawEval(Benchmark):
    name = "claweval"
    description = "Claw-Eval: 300 assistant tasks on mock services (mail, calendar, CRM, ...); pass^3, pass@3"
    default_harness = DEFAULT_HARNESS
    accepts_data_dir = True
    protocol_pending = (
        "protocol record not yet filled: the agent's system prompt and the judge prompts are our own "
        "wording, the graders read task.yaml's scoring components instead of upstream's grader.py, and "
        "the agent samples at the model's default temperature (upstream: 0)"
    )
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
