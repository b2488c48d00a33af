"""Rollout backends: the `RolloutBackend` interface, the registry `ROLLOUT_BACKENDS`, and the local sandbox.

- `start_sandbox(SandboxSpec(...)) -> Sandbox` is the low-level local sandbox (bubblewrap: read-only
  system, one writable work directory, own PID/network namespaces, `forwards` as the only reachable
  ports, `SandboxLimits` by cgroup or rlimit); `Sandbox.wait()` / `.logs()` / `.stop()`, `SandboxResult`.
  `python_ro_binds()` lists what a sandbox needs to run this Python.
- `local` (`LocalBackend`) runs each rollout in such a sandbox; `kubernetes` (`KubernetesBackend`) in one
  Pod per rollout. What a rollout runs is a `RolloutProgram` -> `RolloutCommand` (argv, env, verifier).
- `InProcessTestBackend` is a test double for unit tests and is deliberately not registered.
"""

from forge_eval._registry import Registry
from forge_eval.training.backends._backend import (
    RolloutBackend,
    RolloutHandle,
    RolloutOutcome,
    RolloutSpec,
    RolloutStatus,
)
from forge_eval.training.backends._kubernetes import KubernetesBackend, pod_outcome
from forge_eval.training.backends._local import LocalBackend
from forge_eval.training.backends._program import (
    RolloutCommand,
    RolloutProgram,
    Verdict,
    Verifier,
    default_program,
    proxy_env,
)
from forge_eval.training.backends._sandbox import (
    Sandbox,
    SandboxLimits,
    SandboxResult,
    SandboxSpec,
    SandboxStatus,
    python_ro_binds,
    start_sandbox,
)
from forge_eval.training.backends._test_double import InProcessTestBackend

ROLLOUT_BACKENDS: Registry[type[RolloutBackend]] = Registry("rollout backend")
ROLLOUT_BACKENDS.register(LocalBackend.name, LocalBackend)
ROLLOUT_BACKENDS.register(KubernetesBackend.name, KubernetesBackend)

__all__ = [
    "ROLLOUT_BACKENDS",
    "InProcessTestBackend",
    "KubernetesBackend",
    "LocalBackend",
    "RolloutBackend",
    "RolloutCommand",
    "RolloutHandle",
    "RolloutOutcome",
    "RolloutProgram",
    "RolloutSpec",
    "RolloutStatus",
    "Sandbox",
    "SandboxLimits",
    "SandboxResult",
    "SandboxSpec",
    "SandboxStatus",
    "Verdict",
    "Verifier",
    "default_program",
    "pod_outcome",
    "proxy_env",
    "python_ro_binds",
    "start_sandbox",
]
