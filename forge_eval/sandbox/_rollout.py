"""The rollout contract shared by benchmarks, harnesses and rollout backends.

A backend gets a `RolloutSpec` (which rollout, which harness and task, the proxy URL and signed key), a
program turns it into a `RolloutCommand` (argv, env, binds, forwards, verifier), the verifier returns a
`Verdict`, and the backend reports a `RolloutOutcome`. These types live beside the sandbox, below both
the benchmarks that build commands and the trainer that runs them, so that neither imports the other.
"""

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from forge_eval.sandbox._sandbox import SandboxResult
from forge_eval.sandbox._spec import SandboxLimits

# How a rollout ended, in the proxy control plane's status words.
RolloutStatus = Literal["completed", "timeout", "harness_crash", "oom", "evicted", "aborted"]


@dataclass(frozen=True)
class RolloutSpec:
    """Everything a backend needs to run one rollout attempt.

    Attributes:
        rollout_id: The proxy's rollout id (also the sandbox/pod name stem).
        attempt: The attempt number; a retried rollout gets a fresh attempt and a fresh key.
        harness: The harness name (`forge_eval.harnesses.HARNESSES`).
        task: The forge task spec from the dataset row (`extra_info["forge_task"]`).
        proxy_base_url: Base URL the harness must use, with the rollout path prefix.
        api_key: The rollout's signed key for the proxy.
        deadline_s: Wall-clock budget for harness + verifier.
        env: Extra environment for the harness process.
        group: The GRPO group (rollouts of one prompt); a label on the rollout's pod.
    """

    rollout_id: str
    attempt: int
    harness: str
    task: dict[str, Any]
    proxy_base_url: str
    api_key: str
    deadline_s: float
    env: dict[str, str] = field(default_factory=dict)
    group: str | None = None


@dataclass(frozen=True)
class RolloutOutcome:
    """How a rollout ended. `reward` is the verifier's; None when the verifier could not grade it."""

    status: RolloutStatus
    exit_code: int | None = None
    reward: float | None = None
    verifier_output: dict[str, Any] | None = None
    answer: str | None = None


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
