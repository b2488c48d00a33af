"""`LocalBackend` (`local`): each rollout in its own bubblewrap sandbox on this host.

The harness runs as an unprivileged user of its own and sees the proxy at `127.0.0.1:<proxy_port>` on the
sandbox's own loopback (forwarded to the host proxy's data port, the only thing it can reach), a private
work directory (never the proxy's records or credentials), and the limits of
`SandboxLimits` (default 2 CPU / 2 GiB, as the paper's pods). At most `max_concurrent` rollouts run at
once; `start()` waits for a free slot. A rollout past its deadline is killed with its whole process tree
and reported `timeout`.
"""

import asyncio
import dataclasses
import logging
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from forge_eval._errors import UsageError
from forge_eval.sandbox import (
    RolloutCommand,
    RolloutOutcome,
    RolloutProgram,
    RolloutSpec,
    Sandbox,
    SandboxLimits,
    SandboxSpec,
    proxy_env,
    start_sandbox,
)
from forge_eval.training.backends._backend import RolloutBackend, RolloutHandle
from forge_eval.training.rollouts import default_program, resolve

logger = logging.getLogger(__name__)

#: Statuses after which the verifier still grades the rollout (the harness ran to its own end).
_GRADED = ("completed", "harness_crash")


@dataclass
class _Running:
    sandbox: Sandbox
    command: RolloutCommand
    root: Path
    released: bool = False


def sandbox_url(url: str, port: int) -> str:
    """`url` with its host and port replaced by the sandbox's loopback forward."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UsageError(
            f"proxy base URL {url!r} is not an http(s) URL", hint="e.g. http://127.0.0.1:8400/r/x/0/v1"
        )
    return urlunsplit(parts._replace(netloc=f"127.0.0.1:{port}"))


def _host_target(url: str) -> str:
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return f"{parts.hostname}:{port}"


class LocalBackend(RolloutBackend):
    """Rollouts in bubblewrap sandboxes on this host.

    Args:
        program: Builds each rollout's command (default: the task's `command` or the harness's
            `rollout_command`).
        limits: Per-rollout CPU / memory / pids caps (for commands that name no `limits` of their own).
        max_concurrent: Rollouts running at once.
        root_dir: Where the per-rollout directories go (default: a fresh temporary directory).
        keep_workdirs: Keep each rollout's work directory and logs after `stop()` (debugging).
        proxy_port: The port the proxy has on the sandbox's loopback.
        no_sandbox: Run harnesses directly on the host, unisolated (logs a warning each time).
    """

    name = "local"
    description = (
        "one bubblewrap sandbox per rollout on this host (an unprivileged user of its own, read-only root, "
        "own PID/net namespaces)"
    )

    def __init__(
        self,
        program: RolloutProgram = default_program,
        *,
        limits: SandboxLimits | None = None,
        max_concurrent: int = 4,
        root_dir: Path | None = None,
        keep_workdirs: bool = False,
        proxy_port: int = 18080,
        no_sandbox: bool = False,
    ) -> None:
        if max_concurrent < 1:
            raise UsageError(f"max_concurrent must be at least 1, got {max_concurrent}")
        self.program = program
        self.limits = limits or SandboxLimits()
        self.max_concurrent = max_concurrent
        self.root_dir = root_dir
        self.keep_workdirs = keep_workdirs
        self.proxy_port = proxy_port
        self.no_sandbox = no_sandbox
        self._slots: asyncio.Semaphore | None = None

    def _slot(self) -> asyncio.Semaphore:
        if self._slots is None:  # created in the running loop
            self._slots = asyncio.Semaphore(self.max_concurrent)
        return self._slots

    def _rollout_root(self, spec: RolloutSpec) -> Path:
        if self.root_dir is None:
            self.root_dir = Path(tempfile.mkdtemp(prefix="forge-rollouts-"))
        root = self.root_dir / spec.rollout_id / str(spec.attempt)
        shutil.rmtree(root, ignore_errors=True)  # a retried attempt starts clean
        (root / "work").mkdir(parents=True)
        return root

    async def start(self, spec: RolloutSpec) -> RolloutHandle:
        await self._slot().acquire()
        root: Path | None = None
        try:
            root = self._rollout_root(spec)
            work = root / "work"
            if self.no_sandbox:
                inner = spec
                forwards: dict[int, str] = {}
            else:
                inner_url = sandbox_url(spec.proxy_base_url, self.proxy_port)
                inner = dataclasses.replace(spec, proxy_base_url=inner_url)
                forwards = {self.proxy_port: _host_target(spec.proxy_base_url)}
            command = await resolve(self.program, inner, work)
            try:
                sandbox = await start_sandbox(
                    SandboxSpec(
                        argv=list(command.argv),
                        workdir=work,
                        env={**spec.env, **proxy_env(inner), **command.env},
                        forwards={**forwards, **command.forwards},
                        ro_binds=list(command.ro_binds),
                        limits=command.limits or self.limits,
                        timeout_s=spec.deadline_s,
                        log_dir=root / "logs",
                        hostname=f"forge-{spec.attempt}",
                        cwd=command.cwd,
                    ),
                    no_sandbox=self.no_sandbox,
                )
            except BaseException:
                if command.cleanup is not None:
                    await command.cleanup()
                raise
        except BaseException:
            self._slot().release()
            if root is not None and not self.keep_workdirs:
                shutil.rmtree(root, ignore_errors=True)
            raise
        return RolloutHandle(spec.rollout_id, spec.attempt, _Running(sandbox, command, root))

    async def wait(self, handle: RolloutHandle, deadline: float) -> RolloutOutcome:
        running: _Running = handle.ref
        result = await running.sandbox.wait(deadline)
        outcome = RolloutOutcome(status=result.status, exit_code=result.exit_code)
        if result.status in _GRADED and running.command.verify is not None:
            try:
                verdict = await running.command.verify(result, running.root / "work")
            except Exception as e:  # a verifier bug must not take the trainer down; the rollout is ungraded
                logger.warning("verifier of rollout %s failed: %s", handle.rollout_id, e)
            else:
                outcome = dataclasses.replace(
                    outcome,
                    reward=verdict.reward,
                    verifier_output=verdict.verifier_output,
                    answer=verdict.answer,
                )
        return outcome

    async def logs(self, handle: RolloutHandle) -> str:
        return handle.ref.sandbox.logs()

    async def stop(self, handle: RolloutHandle) -> None:
        running: _Running = handle.ref
        await running.sandbox.stop()
        if not running.released:
            running.released = True
            self._slot().release()
            if running.command.cleanup is not None:
                try:
                    await running.command.cleanup()
                except Exception as e:  # the rollout is over either way; its outcome stands
                    logger.warning("cleanup of rollout %s failed: %s", handle.rollout_id, e)
            if not self.keep_workdirs:
                shutil.rmtree(running.root, ignore_errors=True)
