"""A two-task benchmark for runner tests: real Inspect tasks, answered by the recording server."""

from pathlib import Path
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.model import GenerateConfig
from inspect_ai.scorer import includes

from forge_eval.benchmarks import BENCHMARKS, Benchmark, OfficialSettings
from forge_eval.harnesses import HARNESSES

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
        config=GenerateConfig(seed=seed),
        name="probe",
    )


class ProbeBenchmark(Benchmark):
    name = "probe"
    description = "runner test benchmark"
    official = OfficialSettings(trials=2, pass_threshold=1.0)
    quick_subset = ("six-times-seven",)

    def load(self, data_dir: Path | None = None) -> list[Sample]:
        return list(_SAMPLES)

    def task(self, *, seed: int, harness: str, **options: Any) -> Task:
        return probe(seed=seed, harness=harness, **options)


if "probe" not in BENCHMARKS:
    BENCHMARKS.register("probe", ProbeBenchmark())
