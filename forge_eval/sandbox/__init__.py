"""The local sandbox and the rollout contract: where everything the model controls runs.

- `start_sandbox(SandboxSpec(...)) -> Sandbox` runs one process tree under bubblewrap: read-only system,
  one writable work directory, own PID/network namespaces, `forwards` as the only reachable ports,
  `SandboxLimits` by cgroup or rlimit; `Sandbox.wait()` / `.logs()` / `.stop()`, `SandboxResult`.
  `python_ro_binds()` lists what a sandbox needs to run this Python.
- The rollout contract (`RolloutSpec` -> `RolloutCommand` -> `Verdict` -> `RolloutOutcome`) that
  benchmarks, harnesses and the trainer's rollout backends share.
"""

from forge_eval.sandbox._rollout import (
    RolloutCommand,
    RolloutOutcome,
    RolloutProgram,
    RolloutSpec,
    RolloutStatus,
    Verdict,
    Verifier,
    proxy_env,
)
from forge_eval.sandbox._sandbox import (
    Sandbox,
    SandboxLimits,
    SandboxResult,
    SandboxSpec,
    SandboxStatus,
    python_ro_binds,
    start_sandbox,
)

__all__ = [
    "RolloutCommand",
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
    "proxy_env",
    "python_ro_binds",
    "start_sandbox",
]
