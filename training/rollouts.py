"""What a rollout runs: a `RolloutProgram` turns a `RolloutSpec` into a `RolloutCommand` for a backend.

The backend owns isolation (sandbox or pod), the proxy wiring and the deadline; the program owns the
harness's command line, its configuration and the verifier. The default program runs the task's own
`command` (a list, for scripted and benchmark rollouts), or sets the task up with its benchmark
(`rollout_environment(task)` on its `BENCHMARKS` entry) and asks the harness registry entry for its
`rollout_command(spec, workdir, environment)` (declared on `Harness`: one without it says it cannot run
rollouts). This module is where benchmarks and harnesses meet: neither imports the other for it.
"""

import inspect
from pathlib import Path
from typing import Any

from forge_eval._errors import UsageError
from forge_eval.benchmarks import BENCHMARKS
from forge_eval.harnesses import HARNESSES, TaskEnvironment
from forge_eval.sandbox import RolloutCommand, RolloutProgram, RolloutSpec


async def default_program(spec: RolloutSpec, workdir: Path) -> RolloutCommand:
    """The task's `command`, else the harness's `rollout_command` on the task's environment."""
    command = spec.task.get("command")
    if command is not None:
        if not isinstance(command, list) or not command or not all(isinstance(a, str) for a in command):
            raise UsageError(
                f"task {spec.task.get('task_id')!r}: `command` must be a non-empty list of strings, "
                f"got {command!r}",
                hint='e.g. "command": ["python3", "agent.py"]',
            )
        return RolloutCommand(argv=command)
    harness = HARNESSES.get(spec.harness)
    if not harness.runs_rollouts:  # said before the task's environment is set up for nothing
        raise harness.no_rollouts()
    environment = await task_environment(spec.task)
    try:
        built = harness.rollout_command(spec, workdir, environment)
        return await built if inspect.isawaitable(built) else built
    except BaseException:
        await environment.close()
        raise


async def task_environment(task: dict[str, Any]) -> TaskEnvironment:
    """The environment of a training task spec (`benchmark`, `task_id`, ...: `training.verl.task_rows`)."""
    name = task.get("benchmark")
    if not name:
        raise UsageError(
            f"training task {task.get('task_id')!r} has no benchmark: a real harness gets no tools or grader",
            hint="export tasks with forge_eval.training.verl.task_rows, or give the task a `command`",
        )
    return await BENCHMARKS.get(str(name)).rollout_environment(task)


async def resolve(program: RolloutProgram, spec: RolloutSpec, workdir: Path) -> RolloutCommand:
    built = program(spec, workdir)
    return await built if inspect.isawaitable(built) else built
