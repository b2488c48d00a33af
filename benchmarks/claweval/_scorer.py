"""The Claw-Eval scorer: the score upstream's own grader gave the trial (`tasks/<id>/grader.py`).

Nothing is computed here: upstream's driver graded the trace with the task's grader and its LLM judge,
computed the task score (`models/scoring.py`) and the pass line, and appended them to the trace as its
grading event; this reads them back from the sample's store.
"""

from __future__ import annotations

from inspect_ai.scorer import Metric, SampleScore, Score, Scorer, Target, mean, metric, scorer, stderr
from inspect_ai.solver import TaskState

from forge_eval._errors import ForgeError
from forge_eval.benchmarks.claweval._trial import TRIAL_KEY

#: The dimensions upstream's grader scores, as its trial result names them.
DIMENSIONS = ("completion", "robustness", "communication", "safety")


@metric
def pass_rate() -> Metric:
    """Share of trials upstream's grader passed (its `is_pass`: task_score >= 0.75)."""

    def compute(scores: list[SampleScore]) -> float:
        passed = [bool((s.score.metadata or {}).get("passed")) for s in scores]
        return sum(passed) / len(passed) if passed else 0.0

    return compute


@scorer(metrics=[mean(), stderr(), pass_rate()])
def claweval_scorer() -> Scorer:
    """The trial's task_score and dimensions as upstream's grader gave them."""

    async def score(state: TaskState, target: Target) -> Score:
        trial = state.store.get(TRIAL_KEY)
        if trial is None:
            raise ForgeError(f"sample {state.sample_id}: no Claw-Eval trial ran (no upstream_trial solver)")
        value = float(trial["task_score"])
        parts = ", ".join(f"{d} {trial[d]}" for d in DIMENSIONS)
        return Score(
            value=value,
            answer=state.output.completion,
            explanation=f"upstream grader: task_score {value} ({parts}); passed {trial['passed']}",
            metadata={**{d: trial[d] for d in DIMENSIONS}, "passed": bool(trial["passed"])},
        )

    return score
