"""Each run seed, and each epoch within it, must reach the model's sampling on the wire."""

from inspect_ai import Task, eval_set, task
from inspect_ai.dataset import Sample
from inspect_ai.model import GenerateConfig
from inspect_ai.scorer import includes

from forge_eval.harnesses import HARNESSES, epoch_seed_for
from tests.runner._recording_server import recording_server


@task
def wire_probe(seed: int = 0) -> Task:
    return Task(
        dataset=[
            Sample(id="a", input="What is 6*7?", target="42"),
            Sample(id="b", input="6*7?", target="42"),
        ],
        solver=HARNESSES.get("react").solver(tools=[], system_prompt="Answer, then call submit()."),
        scorer=includes(),
        config=GenerateConfig(seed=seed),
    )


def test_seed_and_epoch_reach_the_wire(tmp_path, monkeypatch):
    with recording_server() as (url, seen):
        monkeypatch.setenv("REC_API_KEY", "test")
        ok, logs = eval_set(
            [wire_probe(seed=3), wire_probe(seed=4)],
            log_dir=str(tmp_path / "logs"),
            model="openai-api/rec/m",
            model_base_url=url,
            epochs=2,
            max_tasks=2,
            display="none",
        )
    assert ok
    seeds = sorted(body["seed"] for body in seen)
    expected = sorted(epoch_seed_for(s, e) for s in (3, 4) for e in (1, 2) for _sample in ("a", "b"))
    assert seeds == expected
    assert epoch_seed_for(3, 1) == 3 and epoch_seed_for(3, 2) != 3
    assert all(log.results.scores[0].metrics["accuracy"].value == 1.0 for log in logs)
