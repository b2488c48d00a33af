"""The local sandbox and the rollout contract: where everything the model controls runs.

- `start_sandbox(SandboxSpec(...)) -> Sandbox` runs one process tree under bubblewrap as an unprivileged
  user of its own: read-only system, one writable work directory, own PID/network namespaces, `forwards`
  as the only reachable ports, `SandboxLimits` by cgroup or rlimit; `Sandbox.wait()` / `.logs()` /
  `.stop()`, `SandboxResult`. `python_ro_binds()` lists what a sandbox needs to run this Python and
  forge_eval's runtime; no sandbox shows forge_eval's other packages (benchmarks: answer keys, judges).
- `sandboxed_command(spec) -> SandboxedCommand`: the same confinement as a command line, for a process
  someone else launches with pipes (an MCP stdio server, a desktop); `sandbox_user()` shares one user
  between sandboxes over one work directory.
- `PrivatePort(NetworkNamespace(pid).connector(port))`: a host loopback port only this run may use,
  carrying each connection into a sandbox's network namespace, to a server the grader can trust.
- The rollout contract (`RolloutSpec` -> `RolloutCommand` -> `Verdict` -> `RolloutOutcome`) that
  benchmarks, harnesses and the trainer's rollout backends share.
"""

from forge_eval.sandbox._binds import python_ro_binds
from forge_eval.sandbox._channel import NetworkNamespace, PrivatePort, UntrustedListener, socket_holders
from forge_eval.sandbox._command import SandboxedCommand, sandboxed_command
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
from forge_eval.sandbox._sandbox import Sandbox, SandboxResult, SandboxStatus, start_sandbox
from forge_eval.sandbox._spec import SandboxLimits, SandboxSpec
from forge_eval.sandbox._user import SandboxUser, sandbox_user

__all__ = [
    "NetworkNamespace",
    "PrivatePort",
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
    "SandboxUser",
    "SandboxedCommand",
    "UntrustedListener",
    "Verdict",
    "Verifier",
    "proxy_env",
    "python_ro_binds",
    "sandbox_user",
    "sandboxed_command",
    "socket_holders",
    "start_sandbox",
]
