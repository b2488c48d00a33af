"""`ExternalHarness`: a harness that is its own program (Codex CLI, Claude Code, OpenClaw) as a solver.

Per sample: a recording proxy whose upstream is the run's Inspect model (`InspectUpstream`, so every
harness call is a `ModelEvent` of the sample) on a free port, the benchmark's tools behind `forge-tool`
(`ToolBridge`) on another, a private workspace, and the harness binary started in the local sandbox with
only those two ports forwarded in. The harness's final message becomes `state.output`; the benchmark's
scorer then grades the environment as for any other harness.

Benchmarks whose tasks live in files (QwenClawBench) pass two solver options: `stage(state, work_dir)`
fills the work dir before launch, and `keep_workspace=True` keeps the workspace after the harness exits
and hands it back in the store (`kept_workspace(state)`, with the run's conversation) for the scorer;
the task's `cleanup=release_workspace` deletes it after scoring.
"""

import asyncio
import json
import os
import re
import secrets
import shutil
import sys
import tempfile
import time
import warnings
from abc import abstractmethod
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar
from uuid import uuid4

import anyio
from inspect_ai.log import transcript
from inspect_ai.model import ChatMessageAssistant, GenerateConfig, ModelOutput, get_model
from inspect_ai.model._generate_config import active_generate_config
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.tool import Tool

from forge_eval._errors import ForgeError
from forge_eval.harnesses._environment import TaskEnvironment, serve_tools
from forge_eval.harnesses._harness import Harness
from forge_eval.harnesses._npm import NpmPackage, ensure_installed
from forge_eval.harnesses._seeding import run_seed_for
from forge_eval.harnesses._settings import current_settings
from forge_eval.harnesses._toolbridge import ToolBridge
from forge_eval.harnesses._workspace import CONVERSATION_FILE, KEPT_KEY, Workspace
from forge_eval.proxy import (
    HttpProxyControl,
    InspectUpstream,
    ProxyConfig,
    create_app,
    create_control_app,
    read_calls,
    serve_in_task,
)
from forge_eval.sandbox import (
    RolloutCommand,
    RolloutOutcome,
    RolloutSpec,
    SandboxLimits,
    SandboxResult,
    SandboxSpec,
    Verdict,
    python_ro_binds,
    start_sandbox,
)

#: The model name harnesses ask for; the proxy serves any name with the run's model.
POLICY_MODEL = "forge-policy"
_ANSWER_NOTE = "There is no submit tool here: your last message is your answer, so end with it."
_SAMPLING_KEYS = ("temperature", "top_p", "top_k", "seed", "max_tokens")

#: `stage` solver option: writes a sample's task files into the harness's work dir before launch.
Stage = Callable[[TaskState, Path], None]


@dataclass(frozen=True)
class ProxyEndpoint:
    """Where a harness sends its model calls.

    Attributes:
        root: The rollout's URL root, `http://127.0.0.1:PORT/r/<rollout>/<attempt>` (append `/v1`
            for OpenAI-style base URLs; Anthropic clients append `/v1/messages` themselves).
        api_key: The rollout's signed key (the path prefix already keys the calls; harnesses want a key).
    """

    root: str
    api_key: str


@dataclass(frozen=True)
class Launch:
    """How to start the harness: argv, its own environment and the files to write first."""

    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)
    files: dict[Path, str] = field(default_factory=dict)


def json_events(stdout: str) -> Iterator[dict[str, Any]]:
    """The JSON objects among a harness's output lines (its JSONL event stream); other lines are skipped."""
    for line in stdout.splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict):
            yield event


class ExternalHarness(Harness):
    """A harness that is an npm-installed program pointed at the recording proxy.

    Subclasses (one module per harness) declare their pinned `packages`, build the `launch` and read
    the `final_answer` from the program's output.
    """

    packages: ClassVar[tuple[NpmPackage, ...]]
    runs_rollouts = True
    resources = {"sandbox": 1}
    #: Seconds the harness may run per sample (the task's time limit also applies).
    timeout_s: ClassVar[float] = 900.0

    @abstractmethod
    def launch(
        self, *, prompt: str, proxy: ProxyEndpoint, workspace: Workspace, prefix: Path, lean: bool = False
    ) -> Launch:
        """The command, environment and config files that run `prompt` against `proxy` (`lean`: the
        harness's small-prompt mode, `HarnessSettings.lean`)."""

    @abstractmethod
    def final_answer(self, stdout: str) -> str:
        """The agent's final message, from the harness's (JSON) output."""

    def limits(self) -> "SandboxLimits":
        """CPU / memory / pids caps of one sample's sandbox (the paper's pods: 2 CPU / 2 GB)."""
        return SandboxLimits()

    @property
    def version(self) -> str:
        return ", ".join(p.spec for p in self.packages)

    def binary(self, prefix: Path) -> Path:
        main = next(p for p in self.packages if p.bin)
        return main.executable(prefix)

    def install(self) -> Path:
        """Install the pinned packages into the npm cache when missing; returns the npm prefix."""
        return ensure_installed(list(self.packages))

    def requirements(self) -> list[str]:
        problems = []
        try:
            self.install()
        except ForgeError as e:
            problems.append(str(e))
        if current_settings().sandbox:
            problems += [
                f"`{tool}` is needed for the local sandbox (Debian: apt-get install bubblewrap socat), "
                "or pass --no-sandbox to run the harness unisolated on this host"
                for tool in ("bwrap", "socat")
                if shutil.which(tool) is None
            ]
        return problems

    async def rollout_command(
        self, spec: "RolloutSpec", workdir: Path, environment: TaskEnvironment
    ) -> "RolloutCommand":
        """A training rollout on a benchmark task: the same `launch` as in `forge-eval run`, with the
        task's tools behind `forge-tool`, pointed at the rollout's proxy URL and key (`harness_rollout`)."""
        prefix = await asyncio.to_thread(self.install)
        proxy = ProxyEndpoint(spec.proxy_base_url, spec.api_key)

        def launch(environment: TaskEnvironment, bridge: ToolBridge, workspace: Workspace) -> Launch:
            prompt = prompt_for(environment.system_prompt, bridge, environment.prompt)
            lean = current_settings().lean
            return self.launch(prompt=prompt, proxy=proxy, workspace=workspace, prefix=prefix, lean=lean)

        return await harness_rollout(
            environment, workdir, launch, self.final_answer, ro_binds=_ro_binds(prefix), limits=self.limits()
        )

    def agent(
        self,
        *,
        tools: list[Tool],
        system_prompt: str,
        stage: Stage | None = None,
        keep_workspace: bool = False,
        bare_prompt: bool = False,
        **options: Any,
    ) -> Solver:
        """`stage` / `keep_workspace`: a task's own files in, the workspace back out (module doc);
        `bare_prompt`: the harness gets the sample's input alone, as the benchmark's upstream sends it."""
        return external_harness(self, tools, system_prompt, stage, keep_workspace, bare_prompt)


async def harness_rollout(
    environment: TaskEnvironment,
    workdir: Path,
    launch: Callable[[TaskEnvironment, ToolBridge, Workspace], Launch],
    final_answer: Callable[[str], str],
    *,
    ro_binds: list[Path],
    limits: "SandboxLimits | None" = None,
) -> "RolloutCommand":
    """A training rollout of a harness program on a benchmark task set up in `environment` (world,
    tools, prompt, grader), for every harness: its tools served from this host (`forge-tool`, forwarded
    into the sandbox), the private workspace in the rollout's work dir, and `launch` there. The
    verifier grades `final_answer(stdout)` with the benchmark's grader; `cleanup` stops the tools and
    closes the environment (which stays the caller's to close if this raises)."""
    bridge = ToolBridge(environment.tools)
    tools_url, stop_tools = await serve_tools(bridge, environment.context)

    async def verify(result: SandboxResult, work: Path) -> "Verdict":
        return await environment.grade(final_answer(result.stdout))

    async def cleanup() -> None:
        try:
            await stop_tools()
        finally:
            await environment.close()

    try:
        workspace = _prepare(Workspace(workdir), bridge)
        started = launch(environment, bridge, workspace)
        env = _launch_env(started, workspace, tools_url)
    except BaseException:
        await stop_tools()
        raise
    return RolloutCommand(
        argv=started.argv,
        env=env,
        ro_binds=ro_binds,
        forwards=_forwards(tools_url),
        cwd=workspace.work,
        verify=verify,
        limits=limits,
        cleanup=cleanup,
    )


def prompt_for(system_prompt: str, bridge: ToolBridge, task: str) -> str:
    """One prompt: the benchmark's instructions, how to call its tools, then the task."""
    tools = f"{bridge.instructions()}\n\n" if bridge.tools else ""
    return f"{system_prompt}\n{_ANSWER_NOTE}\n\n{tools}# Task\n{task}"


def _rollout_id(state: TaskState) -> str:
    stem = re.sub(r"[^A-Za-z0-9_:\-]", "-", str(state.sample_id))[:80]
    return f"{stem}-e{state.epoch}-{uuid4().hex[:8]}"


def _rollout_fields(rollout_id: str, state: TaskState, harness: ExternalHarness) -> dict[str, Any]:
    """The eval rollout's record: task, run seed and epoch (joins records to the log), pinned sampling."""
    sampling = _sampling()
    wire_seed = sampling.get("seed")
    return {
        "rollout_id": rollout_id,
        "task_id": str(state.sample_id),
        "seed": None if wire_seed is None else run_seed_for(wire_seed, state.epoch),
        "epoch": state.epoch,
        "harness": harness.name,
        "mode": "eval",
        "sampling": sampling,
        "deadline_s": harness.timeout_s,
    }


def _sampling() -> dict[str, Any]:
    """The run's sampling, pinned on the rollout: the eval's settings win over the harness's own."""
    config: GenerateConfig = active_generate_config()
    return {k: getattr(config, k) for k in _SAMPLING_KEYS if getattr(config, k) is not None}


@solver
def external_harness(
    harness: ExternalHarness,
    tools: list[Tool],
    system_prompt: str,
    stage: Stage | None = None,
    keep_workspace: bool = False,
    bare_prompt: bool = False,
) -> Solver:
    """Run `harness` on the sample through a per-sample proxy and tool bridge (see the module doc)."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        settings = current_settings()
        prefix = await asyncio.to_thread(harness.install)
        bridge = ToolBridge(tools)
        rollout_id = _rollout_id(state)
        prompt = state.input_text if bare_prompt else prompt_for(system_prompt, bridge, state.input_text)
        started = time.monotonic()
        result = None
        root = Path(tempfile.mkdtemp(prefix=f"forge-{harness.name}-"))
        # the proxy's records stay outside the workspace: the harness must not rewrite its own calls
        records = Path(tempfile.mkdtemp(prefix=f"forge-{harness.name}-records-"))
        kept = False
        try:
            workspace = _prepare(Workspace(root), bridge)
            if stage is not None:
                await asyncio.to_thread(stage, state, workspace.work)
            try:
                result = await _rollout(
                    harness, state, rollout_id, prompt, bridge, workspace, prefix, records
                )
                if keep_workspace:
                    answer = harness.final_answer(result.stdout)
                    _write_conversation(workspace, records, rollout_id, answer)
                    state.store.set(KEPT_KEY, str(root))
                    kept = True
            finally:  # also when the sample's time limit cancels it
                if settings.records_dir is not None:
                    _keep_records(records / rollout_id, settings.records_dir)
                info = {"harness": harness.name, "rollout_id": rollout_id, "lean": settings.lean}
                info.update({"status": "timeout", "sandboxed": settings.sandbox, "exit_code": None})
                if result is not None:
                    info.update(status=result.status, sandboxed=result.sandboxed, exit_code=result.exit_code)
                    info["stderr_tail"] = result.stderr[-2000:]
                info.update(wall_s=round(time.monotonic() - started, 2), tool_calls=bridge.calls)
                transcript().info(info, source=harness.name)
        finally:
            shutil.rmtree(records, ignore_errors=True)
            if not kept:
                shutil.rmtree(root, ignore_errors=True)
        answer = harness.final_answer(result.stdout)
        state.messages.append(ChatMessageAssistant(content=answer, source="generate"))
        state.output = ModelOutput.from_content(model=str(get_model()), content=answer)
        return state

    return solve


async def _rollout(
    harness: ExternalHarness,
    state: TaskState,
    rollout_id: str,
    prompt: str,
    bridge: ToolBridge,
    workspace: Workspace,
    prefix: Path,
    records: Path,
) -> "SandboxResult":
    """One rollout: the sample's proxy and tool bridge served, the harness run in its sandbox, the
    outcome reported. The proxy keeps its records in the sample's own `records` dir, out of the
    sandbox's view: a proxy resumes the unreleased rollouts of its records dir, which in a shared one
    would be other samples' live rollouts."""
    settings = current_settings()
    config = ProxyConfig(
        records_dir=records,
        secret=secrets.token_urlsafe(24),
        served_model=str(get_model()),
    )
    app = create_app(config, InspectUpstream())
    # the control plane has no listener at all: only this solver creates and ends rollouts
    control = HttpProxyControl.in_process(create_control_app(app), str(config.admin_key))
    async with serve_in_task(app) as proxy_url, serve_in_task(bridge.app()) as tools_url:
        created = await control.create_rollout(_rollout_fields(rollout_id, state, harness))
        proxy = ProxyEndpoint(proxy_url + created.base_path, created.api_key)
        launch = harness.launch(
            prompt=prompt, proxy=proxy, workspace=workspace, prefix=prefix, lean=settings.lean
        )
        spec = _sandbox_spec(harness, launch, workspace, prefix, proxy_url, tools_url)
        try:
            result = await _run(spec, settings.sandbox)
        except anyio.get_cancelled_exc_class():  # the sample's time limit: the sandbox is gone
            with anyio.CancelScope(shield=True):
                await control.report(rollout_id, 0, RolloutOutcome("timeout"))
            raise
        answer = harness.final_answer(result.stdout)
        outcome = RolloutOutcome(result.status, exit_code=result.exit_code, answer=answer)
        await control.report(rollout_id, 0, outcome)
        await control.release(rollout_id)
        await control.aclose()
    return result


def _keep_records(rollout_records: Path, records_dir: Path) -> None:
    """Move one sample's rollout records (flushed: its proxy has stopped) into the run's records dir."""
    if rollout_records.is_dir():
        records_dir.mkdir(parents=True, exist_ok=True)
        shutil.move(rollout_records, records_dir / rollout_records.name)


def _write_conversation(workspace: Workspace, records: Path, rollout_id: str, answer: str) -> None:
    """The run's chat messages (its last model call's, in canonical chat form, plus the final answer)
    next to the kept workspace, read before the records move to the run's records dir."""
    calls = read_calls(records, rollout_id)
    messages = list(calls[-1].served_request.get("messages", [])) if calls else []
    messages.append({"role": "assistant", "content": answer})
    # the harness owned this folder: whatever it left under the name (a symlink to a host file) goes first
    target = workspace.root / CONVERSATION_FILE
    if target.is_dir() and not target.is_symlink():
        shutil.rmtree(target)
    target.unlink(missing_ok=True)
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump(messages, f)


def _prepare(workspace: Workspace, bridge: ToolBridge) -> Workspace:
    """Create the directories, the `forge-tool` command and SKILL.md (none without tools: a task's
    own workspace holds only its files)."""
    workspace.create()
    bridge.install(workspace.bin, sys.executable)
    # Codex runs commands in login shells, whose /etc/profile resets PATH; ~/.profile comes after it
    (workspace.home / ".profile").write_text(f'export PATH="{workspace.bin}:$PATH"\n')
    if bridge.tools:
        (workspace.work / "SKILL.md").write_text(bridge.instructions() + "\n")
    return workspace


def _sandbox_spec(
    harness: ExternalHarness,
    launch: Launch,
    workspace: Workspace,
    prefix: Path,
    proxy_url: str,
    tools_url: str,
) -> "SandboxSpec":
    """The harness in a sandbox: the workspace writable, the npm cache and this Python read-only, and the
    ports of the proxy's data plane and of the tool bridge forwarded at the same numbers (nothing else)."""
    return SandboxSpec(
        argv=launch.argv,
        workdir=workspace.root,
        cwd=workspace.work,
        env=_launch_env(launch, workspace, tools_url),
        forwards=_forwards(proxy_url, tools_url),
        ro_binds=_ro_binds(prefix),
        limits=harness.limits(),
        timeout_s=harness.timeout_s,
    )


def _launch_env(launch: Launch, workspace: Workspace, tools_url: str) -> dict[str, str]:
    """Write the launch's config files; the harness's environment in the workspace (eval and training)."""
    for path, text in launch.files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return {
        "HOME": str(workspace.home),
        "TMPDIR": str(workspace.tmp),
        "LANG": "C.UTF-8",
        "FORGE_TOOLS_URL": tools_url,
        **launch.env,
        "PATH": f"{workspace.bin}:{launch.env.get('PATH', '/usr/local/bin:/usr/bin:/bin')}",
    }


def _forwards(*urls: str) -> dict[int, str]:
    """The host ports of `urls`, forwarded into the sandbox at the same numbers."""
    ports = [int(url.rsplit(":", 1)[1].split("/", 1)[0]) for url in urls]
    return {port: f"127.0.0.1:{port}" for port in ports}


def _ro_binds(prefix: Path) -> list[Path]:
    """What the harness reads in its sandbox: the npm prefix, and this Python for `forge-tool`."""
    return [prefix, *python_ro_binds()]


async def _run(spec: "SandboxSpec", sandbox: bool) -> "SandboxResult":
    if not sandbox:
        warnings.warn(
            f"--no-sandbox: {Path(spec.argv[0]).name} runs on this host without isolation",
            stacklevel=2,
        )
    async with await start_sandbox(spec, no_sandbox=not sandbox) as running:
        return await running.wait()
