"""Claw-Eval (claw-eval/claw-eval @ 9365e1a) as upstream runs it.

Each sample is one trial of upstream's own code, read at run time from the pinned tree and run in a venv
of its own (`_upstream.py`): its mock services, runner loop, system prompt and provider settings, simulated
user, graders and LLM judge; the models it calls are the run's Inspect models behind recording proxies
(`_trial.py`). Tasks whose needs are not met here are reported as skipped with a reason.
"""

from forge_eval.benchmarks._benchmark import BENCHMARKS
from forge_eval.benchmarks.claweval._benchmark import PASS_THRESHOLD, TRIALS, ClawEval
from forge_eval.benchmarks.claweval._data import (
    SKIP_RULES,
    ClawTask,
    data_root,
    load_task,
    load_tasks,
    missing_files,
    select_tasks,
    skip_reason,
)
from forge_eval.benchmarks.claweval._judge import JUDGE, OFFICIAL_JUDGE
from forge_eval.benchmarks.claweval._scorer import claweval_scorer
from forge_eval.benchmarks.claweval._task import claweval
from forge_eval.benchmarks.claweval._trial import TRACE_KEY, TRIAL_KEY, final_text, upstream_trial
from forge_eval.benchmarks.claweval._upstream import SOURCE, ensure_venv, upstream_tree, venv_dir

BENCHMARKS.register(ClawEval.name, ClawEval())

__all__ = [
    "JUDGE",
    "OFFICIAL_JUDGE",
    "PASS_THRESHOLD",
    "SKIP_RULES",
    "SOURCE",
    "TRACE_KEY",
    "TRIALS",
    "TRIAL_KEY",
    "ClawEval",
    "ClawTask",
    "claweval",
    "claweval_scorer",
    "data_root",
    "ensure_venv",
    "final_text",
    "load_task",
    "load_tasks",
    "missing_files",
    "select_tasks",
    "skip_reason",
    "upstream_trial",
    "upstream_tree",
    "venv_dir",
]
