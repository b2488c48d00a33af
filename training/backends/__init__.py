"""Rollout backends: the `RolloutBackend` interface and the registry `ROLLOUT_BACKENDS`.

- `local` (`LocalBackend`) runs each rollout in a `forge_eval.sandbox` sandbox (bubblewrap); `ray`
  (`RayBackend`) runs that sandbox in a Ray actor on a node with the harness's resources; `kubernetes`
  (`KubernetesBackend`) in one Pod per rollout. What a rollout runs is a `RolloutProgram` ->
  `RolloutCommand` (`forge_eval.sandbox`), by default `forge_eval.training.rollouts.default_program`.
- `InProcessTestBackend` is a test double for unit tests and is deliberately not registered.
"""

from forge_eval._registry import Registry
from forge_eval.training.backends._backend import RolloutBackend, RolloutHandle
from forge_eval.training.backends._kubernetes import KubernetesBackend, pod_outcome
from forge_eval.training.backends._local import LocalBackend
from forge_eval.training.backends._ray import RayBackend
from forge_eval.training.backends._test_double import InProcessTestBackend

ROLLOUT_BACKENDS: Registry[type[RolloutBackend]] = Registry("rollout backend")
ROLLOUT_BACKENDS.register(LocalBackend.name, LocalBackend)
ROLLOUT_BACKENDS.register(RayBackend.name, RayBackend)
ROLLOUT_BACKENDS.register(KubernetesBackend.name, KubernetesBackend)

__all__ = [
    "ROLLOUT_BACKENDS",
    "InProcessTestBackend",
    "KubernetesBackend",
    "LocalBackend",
    "RayBackend",
    "RolloutBackend",
    "RolloutHandle",
    "pod_outcome",
]
