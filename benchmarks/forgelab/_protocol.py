"""forgelab's protocol record. forgelab is forge-eval's own benchmark, so its official protocol is ours:
the default harness and limits, the packaged tasks, world and services, our prompt and verifiers. A run
is comparable when it used all of them as they are here."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from forge_eval.benchmarks import services
from forge_eval.benchmarks._benchmark import RunUsed, own_elements
from forge_eval.benchmarks.forgelab._data import DATA_DIR, select_tasks
from forge_eval.benchmarks.forgelab._task import (
    DEFAULT_MAX_TOKENS,
    DEFAULT_MESSAGE_LIMIT,
    DEFAULT_TIME_LIMIT,
    SYSTEM_PROMPT,
)
from forge_eval.harnesses import HARNESSES
from forge_eval.rundir import NotUsed, Ours, ProtocolRecord, Value, element

_HERE = Path(__file__).parent
_SERVICES = Path(services.__file__).parent
OFFICIAL_HARNESS = "react"


def _harness(name: str, message_limit: Any, time_limit: Any) -> Value:
    value = {
        "name": name,
        "version": HARNESSES.get(name).version,
        "message_limit": message_limit,
        "time_limit": time_limit,
    }
    return Value(value=value, label=f"{name} ({value['version']}), {message_limit} messages, {time_limit} s")


def _files(data_dir: Path) -> tuple[Ours, Ours]:
    """The environment (services + world) and the task data, read from `data_dir`."""
    services_and_world = Ours.files("the local services and world.yaml", _SERVICES, data_dir / "world.yaml")
    return services_and_world, Ours.files("forgelab's tasks.yaml", data_dir / "tasks.yaml")


def protocol(run: RunUsed) -> ProtocolRecord:
    """Official (forge-eval's own forgelab) and this run's side of every protocol element."""
    args = run.task_args
    data_dir = Path(args.get("data_dir") or DATA_DIR)
    environment, data = _files(DATA_DIR)
    run_environment, run_data = _files(data_dir)
    no_judge = "verifiers check the final service state and the answer; no LLM judge"
    own = own_elements(run, (s.id for s in select_tasks().samples), DEFAULT_MAX_TOKENS, no_judge)
    return ProtocolRecord(
        elements=[
            own["task_set"],
            element(
                "harness",
                _harness(OFFICIAL_HARNESS, DEFAULT_MESSAGE_LIMIT, DEFAULT_TIME_LIMIT),
                _harness(run.harness, args.get("message_limit"), args.get("time_limit")),
            ),
            element("agent_prompt", Ours.text("forgelab's system prompt", SYSTEM_PROMPT)),
            own["agent_sampling"],
            own["judge_model"],
            own["judge_prompt"],
            element("user_model", NotUsed(why="single-turn tasks: no simulated user")),
            element("grader", Ours.files("forgelab's verifiers", _HERE / "_checks.py", _HERE / "_scorer.py")),
            element("environment", environment, run_environment),
            element("data", data, run_data),
        ]
    )
