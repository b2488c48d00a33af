"""Rollout backends: the `RolloutBackend` interface and the registry `ROLLOUT_BACKENDS`.

The local (bubblewrap) and Kubernetes backends register here when they land; `InProcessTestBackend` is a
test double for unit tests and is deliberately not registered.
"""

from forge_eval._registry import Registry
from forge_eval.training.backends._backend import (
    RolloutBackend,
    RolloutHandle,
    RolloutOutcome,
    RolloutSpec,
    RolloutStatus,
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

__all__ = [
    "ROLLOUT_BACKENDS",
    "InProcessTestBackend",
    "RolloutBackend",
    "RolloutHandle",
    "RolloutOutcome",
    "RolloutSpec",
    "RolloutStatus",
    "Sandbox",
    "SandboxLimits",
    "SandboxResult",
    "SandboxSpec",
    "SandboxStatus",
    "python_ro_binds",
    "start_sandbox",
]
