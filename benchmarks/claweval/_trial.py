"""One Claw-Eval trial per sample, run by upstream's own code (`_driver/run_trial.py`) in its own venv.

Per sample: three recording proxies on free ports whose upstreams are the run's Inspect models -- the
agent (the sample's model), the judge (role `judge`) and the simulated user (role `user`, else the
judge's model) -- so every call upstream's code makes is a `ModelEvent` of the sample and the agent's are
call records; upstream's config for the task's split with those three endpoints put in; and the driver,
which starts upstream's mock services on a port range of their own, runs upstream's loop, grades the trace
with the task's `grader.py` and appends the grading event. The trace (upstream's JSONL) is kept in the
sample's store, so the Inspect log holds what `claw-eval grade` reads.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import secrets
import shutil
import signal
import socket
import tempfile
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from inspect_ai.log import transcript
from inspect_ai.model import ChatMessageAssistant, Model, ModelOutput, get_model
from inspect_ai.model._generate_config import active_generate_config
from inspect_ai.solver import Generate, Solver, TaskState, solver

from forge_eval._errors import ForgeError
from forge_eval.benchmarks.claweval._driver import RUN_TRIAL
from forge_eval.benchmarks.claweval._sandbox import SandboxServer, sandbox_server
from forge_eval.benchmarks.claweval._upstream import SERP_KEY, ensure_venv
from forge_eval.harnesses import current_settings
from forge_eval.proxy import (
    CanonicalRequest,
    HttpProxyControl,
    InspectUpstream,
    ProxyConfig,
    UpstreamResult,
    create_app,
    create_control_app,
    serve_in_task,
)

#: The store keys the scorer reads: the driver's trial result and upstream's trace (JSONL text).
TRIAL_KEY = "claweval:trial"
TRACE_KEY = "claweval:trace"
#: Upstream's config per split (its README names one config file per kind of task).
SPLIT_CONFIGS = {
    "general": "config_general.yaml",
    "multimodal": "config_multimodal.yaml",
    "multi_turn": "config_user_agent.yaml",
}
#: The simulated user's model role (`forge-eval run --model-role user=MODEL`; unbound: the judge's model
#: serves it, as upstream falls back to the judge's key).
USER_ROLE = "user"
#: Sampling settings a client's own request may carry through to the model (upstream's provider sends
#: temperature 0); the run's pinned settings (seed, reply cap) win over them.
_CLIENT_KEYS = ("temperature", "top_p", "top_k", "presence_penalty", "frequency_penalty")
#: Port offsets for a trial's mock services: upstream's ports (9100-9130) moved into a free range.
_OFFSETS = range(10_000, 50_000, 200)
_offsets_in_use: set[int] = set()


class ClientSampling:
    """An Inspect upstream that keeps the client's own sampling settings (the proxy's served body carries
    only the rollout's pinned ones): upstream's provider asks for temperature 0, and gets it."""

    def __init__(self, model: Model | None = None) -> None:
        self._inner = InspectUpstream(model)

    async def complete(
        self, request: CanonicalRequest, sampling: dict[str, Any], *, route_key: str, call_seq: int
    ) -> UpstreamResult:
        client = {k: request.client_sampling[k] for k in _CLIENT_KEYS if k in request.client_sampling}
        return await self._inner.complete(
            request, {**client, **sampling}, route_key=route_key, call_seq=call_seq
        )

    async def count_tokens(self, request: CanonicalRequest) -> int:
        return await self._inner.count_tokens(request)

    async def aclose(self) -> None:
        await self._inner.aclose()


@dataclass(frozen=True)
class Endpoint:
    """An OpenAI-compatible endpoint upstream's code is given: base URL (with /v1), key, model name."""

    base_url: str
    api_key: str
    model: str


@contextlib.asynccontextmanager
async def _proxy(
    name: str, upstream: ClientSampling, model: str, fields: dict[str, Any], records: Path
) -> AsyncIterator[Endpoint]:
    """A recording proxy for one of the trial's models, served from this task (see the module doc)."""
    config = ProxyConfig(records_dir=records / name, secret=secrets.token_urlsafe(24), served_model=model)
    app = create_app(config, upstream)
    control = HttpProxyControl.in_process(create_control_app(app), str(config.admin_key))
    rollout_id = f"{fields['rollout_id']}-{name}"
    async with serve_in_task(app) as url:
        created = await control.create_rollout({**fields, "rollout_id": rollout_id})
        try:
            yield Endpoint(f"{url}{created.base_path}/v1", created.api_key, model)
        finally:
            with contextlib.suppress(Exception):
                await control.release(rollout_id)
            await control.aclose()


def _free(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


@contextlib.contextmanager
def port_offset(ports: list[int]) -> Any:
    """An offset that moves every one of `ports` onto a free port, held for the trial (upstream's
    `ServiceManager` would otherwise reuse another trial's service that answers on the task's port)."""
    for offset in _OFFSETS:
        if offset not in _offsets_in_use and all(_free(p + offset) for p in ports):
            _offsets_in_use.add(offset)
            try:
                yield offset
            finally:
                _offsets_in_use.discard(offset)
            return
    raise ForgeError(f"no free port range for Claw-Eval's mock services (ports {ports} + 10000..50000)")


def write_config(
    tree: Path, split: str, agent: Endpoint, judge: Endpoint, user: Endpoint, path: Path
) -> Path:
    """Upstream's config for `split`, with the three endpoints in place of its OpenRouter ones."""
    config = yaml.safe_load((tree / SPLIT_CONFIGS[split]).read_text(encoding="utf-8")) or {}
    for section, endpoint in (("model", agent), ("judge", judge), ("user_agent_model", user)):
        entry = config.setdefault(section, {})
        entry.update(base_url=endpoint.base_url, api_key=endpoint.api_key, model_id=endpoint.model)
    # a sandbox is handed over by the driver, never Docker's
    config.setdefault("sandbox", {})["enabled"] = False
    path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return path


def driver_env(tree: Path, home: Path) -> dict[str, str]:
    """The driver's environment: nothing of ours (no credentials), upstream's package on the path (no
    bytecode written next to it: the tree stays as pinned, or the next run's manifest check refuses it),
    and the user's SERP key where they exported it for upstream's live-web services (which inherit it)."""
    serp = {key: os.environ[key] for key in (SERP_KEY, "SERP_API_URL") if os.environ.get(key)}
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "PYTHONPATH": str(tree / "src"),
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONUNBUFFERED": "1",
        "no_proxy": "localhost,127.0.0.1",
        "NO_PROXY": "localhost,127.0.0.1",
        **serp,
    }


async def run_driver(
    python: Path, spec: dict[str, Any], work: Path, tree: Path, sandbox: SandboxServer | None = None
) -> dict[str, Any]:
    """Run `_driver/run_trial.py` on `spec`; its result dict. The process group dies with the sample.
    With `sandbox`, the driver may use its URL and asks over a socket of its own (`leftovers_fd`) for the
    agent's leftovers to be ended before the grader-only files go in."""
    ours, theirs = socket.socketpair()
    spec = {**spec, "sandbox_url": None}
    if sandbox is not None:
        spec.update(sandbox_url=sandbox.url, leftovers_fd=theirs.fileno())
    spec_path = work / "spec.json"
    spec_path.write_text(json.dumps(spec), encoding="utf-8")
    log_path = work / "driver.log"
    with open(log_path, "wb") as log, ours, theirs:
        process = await asyncio.create_subprocess_exec(
            str(python), str(RUN_TRIAL), str(spec_path),
            cwd=tree, env=driver_env(tree, work), stdout=log, stderr=asyncio.subprocess.STDOUT,
            start_new_session=True, pass_fds=[theirs.fileno()] if sandbox is not None else [],
        )
        theirs.close()
        answering = None
        if sandbox is not None:
            sandbox.allow(process.pid)
            answering = asyncio.ensure_future(_end_leftovers_when_asked(ours, sandbox))
        try:
            code = await process.wait()
        finally:
            if process.returncode is None:  # cancelled (the sample's time limit): its services go too
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                await process.wait()
            if answering is not None:
                answering.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await answering  # raises what failed in it
    result = Path(spec["result"])
    if code != 0 or not result.is_file():
        tail = log_path.read_text(encoding="utf-8", errors="replace")[-3000:]
        raise ForgeError(f"Claw-Eval's trial driver failed (exit {code}):\n{tail}")
    return json.loads(result.read_text(encoding="utf-8"))


async def _end_leftovers_when_asked(channel: socket.socket, sandbox: SandboxServer) -> None:
    """Each byte the driver sends (before upstream's `inject_grader_files`) ends every process of the
    sandbox but its server (those ended are noted in the transcript); the answer byte says it is done. A
    failure closes the channel: the driver's trial fails, never grades."""
    loop = asyncio.get_running_loop()
    channel.setblocking(False)
    with channel:
        while await loop.sock_recv(channel, 1):
            if ended := await asyncio.to_thread(sandbox.end_leftovers):
                transcript().info({"agent_processes_ended_before_grading": ended}, source="claw-eval")
            await loop.sock_sendall(channel, b"\n")


def final_text(trace: str) -> str:
    """The last assistant message's text in an upstream trace (the answer its graders read)."""
    text = ""
    for line in trace.splitlines():
        event = json.loads(line) if line.strip() else {}
        message = event.get("message") if event.get("type") == "message" else None
        if message and message.get("role") == "assistant":
            parts = [b.get("text", "") for b in message.get("content", []) if b.get("type") == "text"]
            text = "".join(parts) or text
    return text


def _role_model(role: str, default: Model | None = None) -> Model:
    return get_model(role=role, default=default) if default is not None else get_model(role=role)


@solver
def upstream_trial(tree: Path, sandbox: bool = True) -> Solver:
    """Run the sample as one trial of upstream's `claw-eval batch` (module doc); `sandbox`: with
    upstream's sandbox server in our sandbox (`batch --sandbox`)."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        python = await asyncio.to_thread(ensure_venv, tree)
        meta = state.metadata
        judge_model = _role_model("judge")
        user_model = _role_model(USER_ROLE, default=judge_model)
        pinned = _pinned_sampling()
        fields = {
            "rollout_id": f"{state.sample_id}-e{state.epoch}-{secrets.token_hex(4)}",
            "task_id": str(state.sample_id),
            "epoch": state.epoch,
            "harness": "claw-loop",
            "mode": "eval",
            "sampling": pinned,
        }
        work = Path(tempfile.mkdtemp(prefix="forge-claweval-"))
        records = work / "records"
        try:
            unpinned = {**fields, "sampling": {}}
            async with contextlib.AsyncExitStack() as stack:
                agent = await stack.enter_async_context(
                    _proxy("agent", ClientSampling(), str(get_model()), fields, records)
                )
                judge = await stack.enter_async_context(
                    _proxy("judge", ClientSampling(judge_model), str(judge_model), unpinned, records)
                )
                user = await stack.enter_async_context(
                    _proxy("user", ClientSampling(user_model), str(user_model), unpinned, records)
                )
                offset = stack.enter_context(port_offset(meta["ports"]))
                server = None
                if sandbox:
                    (work / "workspace").mkdir()
                    served = sandbox_server(tree, python, work / "workspace", work / "sandbox.log")
                    server = await stack.enter_async_context(served)
                (work / "traces").mkdir()
                config = write_config(tree, meta["split"], agent, judge, user, work / "config.yaml")
                spec = {
                    "task_dir": str(tree / "tasks" / str(state.sample_id)),
                    "config": str(config),
                    "model": agent.model,
                    "api_key": agent.api_key,
                    "base_url": agent.base_url,
                    "trace_dir": str(work / "traces"),
                    "port_offset": offset,
                    "result": str(work / "result.json"),
                }
                result = await run_driver(python, spec, work, tree, server)
            trial = _one_trial(result)
            trace = Path(trial["trace"]).read_text(encoding="utf-8")
        finally:
            _keep_records(records, current_settings().records_dir)
            shutil.rmtree(work, ignore_errors=True)
        state.store.set(TRIAL_KEY, {k: v for k, v in trial.items() if k != "trace"})
        state.store.set(TRACE_KEY, trace)
        info = {"claweval_trial": state.store.get(TRIAL_KEY), "port_offset": offset}
        transcript().info(info, source="claw-eval")
        answer = final_text(trace)
        state.messages.append(ChatMessageAssistant(content=answer, source="generate"))
        state.output = ModelOutput.from_content(model=str(get_model()), content=answer)
        return state

    return solve


def _keep_records(records: Path, records_dir: Path | None) -> None:
    """Move the trial's call records (its proxies have stopped) into the run's records dir. Each proxy
    kept its own folder while it ran: a proxy resumes the unreleased rollouts of its folder, which in a
    shared one would be other samples' live rollouts."""
    if records_dir is None:
        return
    records_dir.mkdir(parents=True, exist_ok=True)
    for rollout in sorted(records.glob("*/*")):
        if rollout.is_dir():
            shutil.move(rollout, records_dir / rollout.name)


def _one_trial(result: dict[str, Any]) -> dict[str, Any]:
    """The driver's single trial; an error (upstream's loop or grader failed) fails the sample."""
    trials = result.get("trials") or []
    if result.get("error") or not trials or trials[0].get("error"):
        error = result.get("error") or (trials[0].get("error") if trials else "no trial ran")
        raise ForgeError(f"Claw-Eval trial of {result.get('task_id')} failed in upstream's code: {error}")
    return trials[0]


def _pinned_sampling() -> dict[str, Any]:
    """What the run pins on the agent's calls (its seed, a reply cap); the rest is upstream's request."""
    config = active_generate_config()
    keys = ("seed", "max_tokens", "temperature")
    return {k: getattr(config, k) for k in keys if getattr(config, k) is not None}
