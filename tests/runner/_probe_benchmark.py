"""Benchmarks for runner tests: real Inspect tasks, answered by the recording server.

`probe`: three built-in tasks scored by `includes()`. `judged-probe`: tasks read from
`--data-dir`, some skipped, scored by a judge model role (the recording server acts as a scripted
judge), with official judge and paper scores declared.
"""

import hashlib
import json
from pathlib import Path
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.model import GenerateConfig, get_model
from inspect_ai.scorer import CORRECT, INCORRECT, Score, Scorer, Target, accuracy, includes, scorer
from inspect_ai.solver import TaskState

from forge_eval._errors import ForgeError
from forge_eval.benchmarks import BENCHMARKS, Benchmark, OfficialSettings, RunUsed, Selection, task_set
from forge_eval.harnesses import HARNESSES
from forge_eval.rundir import ProtocolRecord, Value, element

_SAMPLES = [
    Sample(id="six-times-seven", input="What is 6*7?", target="42", metadata={"difficulty": "easy"}),
    Sample(id="forty-two", input="Say 42.", target="42", metadata={"difficulty": "easy"}),
    Sample(id="unanswerable", input="What is 3+4?", target="7", metadata={"difficulty": "hard"}),
]


@task
def probe(seed: int = 0, harness: str = "react", task_ids: str | None = None) -> Task:
    samples = [s for s in _SAMPLES if task_ids is None or s.id in task_ids.split(",")]
    return Task(
        dataset=samples,
        solver=HARNESSES.get(harness).solver(tools=[], system_prompt="Answer, then call submit()."),
        scorer=includes(),
        config=GenerateConfig(seed=seed, max_tokens=64),
        message_limit=6,  # a real small model may never call submit()
        name="probe",
    )


def _probe_selection(data_dir: Path | None = None, task_ids: str | None = None) -> Selection:
    return Selection([s for s in _SAMPLES if task_ids is None or s.id in task_ids.split(",")])


class ProbeBenchmark(Benchmark):
    name = "probe"
    description = "runner test benchmark"
    official = OfficialSettings(trials=2, pass_threshold=1.0)
    quick_subset = ("six-times-seven",)
    select_function = _probe_selection
    task_function = probe

    def protocol(self, run: RunUsed) -> ProtocolRecord:
        """Two elements filled from what the run used (the rest is left unrecorded)."""
        every = task_set((s.id for s in _SAMPLES), "all")
        return ProtocolRecord(
            elements=[
                element("task_set", every, task_set(run.task_ids, run.selection)),
                element("agent_sampling", Value(value={"max_tokens": 64}), Value(value={**run.sampling})),
                element("harness", Value(value="react"), Value(value=run.harness)),
            ]
        )


if "probe" not in BENCHMARKS:
    BENCHMARKS.register("probe", ProbeBenchmark())


JUDGE_PROMPT = "Is the answer {answer} right for the target {target}? Reply 42 if it is."


@scorer(metrics=[accuracy()])
def judged() -> Scorer:
    """Scripted-judge scorer: asks the model bound to role "judge" (the recording server says 42)."""

    async def score(state: TaskState, target: Target) -> Score:
        prompt = JUDGE_PROMPT.format(answer=state.output.completion, target=target.text)
        verdict = await get_model(role="judge").generate(prompt)
        return Score(value=CORRECT if "42" in verdict.completion else INCORRECT)

    return score


def _data_samples(data_dir: Path) -> tuple[list[Sample], dict[str, str]]:
    """Runnable samples and skipped task ids (those that declare a `needs`) from data_dir/tasks.json."""
    rows = json.loads((data_dir / "tasks.json").read_text())
    runnable = [Sample(id=r["id"], input=r["input"], target=r["target"]) for r in rows if "needs" not in r]
    return runnable, {r["id"]: f"needs {r['needs']}, not available here" for r in rows if "needs" in r}


@task
def judged_probe(seed: int = 0, harness: str = "react", data_dir: str = "") -> Task:
    return Task(
        dataset=_data_samples(Path(data_dir))[0],
        solver=HARNESSES.get(harness).solver(tools=[], system_prompt="Answer, then call submit()."),
        scorer=judged(),
        config=GenerateConfig(seed=seed, max_tokens=64),
        message_limit=6,  # a real small model may never call submit()
        name="judged_probe",
    )


def _judged_selection(data_dir: Path | None = None) -> Selection:
    if data_dir is None:
        raise ForgeError("judged-probe needs --data-dir")
    return Selection(*_data_samples(data_dir))


class JudgedProbeBenchmark(Benchmark):
    name = "judged-probe"
    description = "runner test benchmark with an LLM judge, external data and skipped tasks"
    official = OfficialSettings(
        trials=2,
        judge_role="judge",
        judge_model="openai-api/rec/official-judge",
        paper_scores={"success_rate": 0.615, "pass^2": 0.5},
        paper_source="a paper, Table 2",
    )
    accepts_data_dir = True
    select_function = _judged_selection
    task_function = judged_probe

    def judge_info(self, judge_model: str) -> dict[str, Any]:
        return {
            "prompt_sha256": hashlib.sha256(JUDGE_PROMPT.encode()).hexdigest(),
            "settings": {"temperature": 0.0},
        }


if "judged-probe" not in BENCHMARKS:
    BENCHMARKS.register("judged-probe", JudgedProbeBenchmark())
