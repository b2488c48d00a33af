"""What a rollout runs: a `RolloutProgram` turns a `RolloutSpec` into a `RolloutCommand` for a backend.

The backend owns isolation (sandbox or pod), the proxy wiring and the deadline; the program owns the
harness's command line, its configuration and the verifier. The default program runs the task's own
`command` (a list, for scripted and benchmark rollouts) or asks the harness registry entry for its
`rollout_command(spec, workdir)`; a harness without one cannot run training rollouts yet and says so.
"""

import inspect
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from forge_eval._errors import ForgeError, UsageError
from forge_eval.training.backends._backend import RolloutSpec
from forge_eval.training.backends._sandbox import SandboxLimits, SandboxResult


@dataclass(frozen=True)
class Verdict:
    """The verifier's grade of a rollout."""

    reward: float | None
    verifier_output: dict[str, Any] | None = None
    answer: str | None = None


Verifier = Callable[[SandboxResult, Path], Awaitable[Verdict]]


@dataclass(frozen=True)
class RolloutCommand:
    """One rollout's process, as the program wants it run.

    Attributes:
        argv: The harness command (resolved inside the sandbox or image).
        env: Its environment, on top of the backend's proxy variables (see `proxy_env`).
        ro_binds: Host paths it needs read-only (local backend; images carry their own files).
        forwards: More ports to reach besides the proxy (sandbox port -> host target), e.g. a tool server.
        cwd: Its working directory inside the work directory (default: the work directory).
        verify: Grades the finished rollout on the host (the verifier is trusted code; the harness is not).
        limits: The harness's own CPU / memory / pids needs (default: the backend's limits).
        cleanup: Frees what the program set up for the rollout on the host (a task's world, a tool
            server); the backend awaits it once, at stop, after the verifier.
    """

    argv: Sequence[str]
    env: Mapping[str, str] = field(default_factory=dict)
    ro_binds: Sequence[Path] = ()
    forwards: Mapping[int, str] = field(default_factory=dict)
    cwd: Path | None = None
    verify: Verifier | None = None
    limits: SandboxLimits | None = None
    cleanup: Callable[[], Awaitable[None]] | None = None


RolloutProgram = Callable[[RolloutSpec, Path], RolloutCommand | Awaitable[RolloutCommand]]


def proxy_env(spec: RolloutSpec) -> dict[str, str]:
    """The variables every rollout gets: the rollout's URL root on the proxy (`.../r/<id>/<attempt>`) and
    its signed key, under forge's names and those the OpenAI and Anthropic SDKs read (OpenAI clients
    append paths to `.../v1`, Anthropic clients add `/v1/messages` themselves)."""
    root = spec.proxy_base_url.rstrip("/")
    return {
        "FORGE_PROXY_BASE_URL": root,
        "FORGE_PROXY_API_KEY": spec.api_key,
        "FORGE_ROLLOUT_ID": spec.rollout_id,
        "FORGE_ROLLOUT_ATTEMPT": str(spec.attempt),
        "OPENAI_BASE_URL": f"{root}/v1",
        "OPENAI_API_KEY": spec.api_key,
        "ANTHROPIC_BASE_URL": root,
        "ANTHROPIC_API_KEY": spec.api_key,
    }


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
    from forge_eval.harnesses import HARNESSES

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
