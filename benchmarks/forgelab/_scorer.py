"""The forgelab scorer: run the task's checks against the world's final state and the answer."""

from __future__ import annotations

from typing import Any

from inspect_ai.scorer import (
    Metric,
    SampleScore,
    Score,
    Scorer,
    Target,
    accuracy,
    metric,
    scorer,
    stderr,
)
from inspect_ai.solver import TaskState

from forge_eval.benchmarks.forgelab._checks import CheckContext, CheckResult, run_checks
from forge_eval.benchmarks.services import ServiceError, WorldClient, bound_world


@metric
def pass_rate() -> Metric:
    """Share of samples whose checks all passed (score 1.0): the trial pass criterion."""

    def compute(scores: list[SampleScore]) -> float:
        values = [s.score.as_float() for s in scores]
        return sum(v >= 1.0 for v in values) / len(values) if values else 0.0

    return compute


@scorer(metrics=[accuracy(), stderr(), pass_rate()])
def forgelab_scorer() -> Scorer:
    """Score = fraction of the task's checks that pass, in [0, 1]; all pass = the trial passes."""

    async def score(state: TaskState, target: Target) -> Score:
        answer = state.output.completion if state.output else ""
        bound = bound_world()
        if bound is None:
            return Score(value=0.0, answer=answer, explanation="no service world was set up for this sample")
        world, urls = bound
        return await grade_world(WorldClient(urls, world), answer, state.metadata)

    return score


async def grade_world(client: WorldClient, answer: str, metadata: dict[str, Any]) -> Score:
    """Run the task's checks (`metadata`) on the world's final state and the answer (the scorer of eval
    samples and the verifier of training rollouts)."""
    try:
        final = {service: (await client.state(service))["state"] for service in client.urls}
    except ServiceError as e:
        return Score(value=0.0, answer=answer, explanation=f"could not read the final state: {e}")
    ctx = CheckContext(answer=answer, final=final, initial=metadata["initial_state"])
    results = run_checks(metadata["checks"], ctx)
    passed = sum(r.passed for r in results)
    return Score(
        value=passed / len(results),
        answer=answer,
        explanation="\n".join(_line(r) for r in results),
        metadata={"checks": [_as_dict(r) for r in results], "passed": passed == len(results)},
    )


def _line(result: CheckResult) -> str:
    return f"{'PASS' if result.passed else 'FAIL'} {result.name} ({result.detail})"


def _as_dict(result: CheckResult) -> dict[str, Any]:
    return {"name": result.name, "passed": result.passed, "detail": result.detail}
