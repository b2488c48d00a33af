"""What a rollout runs: a `RolloutProgram` turns a `RolloutSpec` into a `RolloutCommand` for a backend.

The backend owns isolation (sandbox or pod), the proxy wiring and the deadline; the program owns the
harness's command line, its configuration and the verifier. The default program runs the task's own
`command` (a list, for scripted and benchmark rollouts) or asks the harness registry entry for its
`rollout_command(spec, workdir)` (declared on `Harness`: one without it says it cannot run rollouts).
"""

import inspect
from pathlib import Path

from forge_eval._errors import UsageError
from forge_eval.harnesses import HARNESSES
from forge_eval.sandbox import RolloutCommand, RolloutProgram, RolloutSpec


def default_program(spec: RolloutSpec, workdir: Path) -> RolloutCommand:
    """The task's `command`, else the harness's `rollout_command(spec, workdir)`."""
    command = spec.task.get("command")
    if command is not None:
        if not isinstance(command, list) or not command or not all(isinstance(a, str) for a in command):
            raise UsageError(
                f"task {spec.task.get('task_id')!r}: `command` must be a non-empty list of strings, "
                f"got {command!r}",
                hint='e.g. "command": ["python3", "agent.py"]',
            )
        return RolloutCommand(argv=command)
    return HARNESSES.get(spec.harness).rollout_command(spec, workdir)


async def resolve(program: RolloutProgram, spec: RolloutSpec, workdir: Path) -> RolloutCommand:
    built = program(spec, workdir)
    return await built if inspect.isawaitable(built) else built
