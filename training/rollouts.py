"""What a rollout runs: a `RolloutProgram` turns a `RolloutSpec` into a `RolloutCommand` for a backend.

The backend owns isolation (sandbox or pod), the proxy wiring and the deadline; the program owns the
harness's command line, its configuration and the verifier. The default program runs the task's own
`command` (a list, for scripted and benchmark rollouts) or asks the harness registry entry for its
`rollout_command(spec, workdir)`; a harness without one cannot run training rollouts yet and says so.
"""

import inspect
from pathlib import Path

from forge_eval._errors import ForgeError, UsageError
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
    harness = HARNESSES.get(spec.harness)
    build = getattr(harness, "rollout_command", None)
    if build is None:
        raise ForgeError(
            f"harness {spec.harness!r} cannot run training rollouts: it has no rollout_command()",
            hint="give the task a `command`, or pass the backend a RolloutProgram for this harness",
        )
    return build(spec, workdir)


async def resolve(program: RolloutProgram, spec: RolloutSpec, workdir: Path) -> RolloutCommand:
    built = program(spec, workdir)
    return await built if inspect.isawaitable(built) else built
