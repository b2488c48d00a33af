"""The `ray` rollout backend on a real Ray cluster on this machine: a head without the `sandbox` resource and
a worker raylet with it, so every rollout must land on the worker. A tool-calling agent runs in its
sandbox there through the real recording proxy (calls recorded with token ids, the proxy's control plane
unreachable) and its verdict comes back; a resource no node has fails at once; stop() and a killed raylet
leave no sandbox process running."""

import asyncio
import json
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from forge_eval._errors import ForgeError, UsageError
from forge_eval.benchmarks.forgelab import select_tasks
from forge_eval.proxy import (
    HttpProxyControl,
    ProxyConfig,
    ScriptedUpstream,
    ServerThread,
    create_app,
    create_control_app,
    iter_attempts,
    read_calls,
    read_rollout,
    serve_in_thread,
)
from forge_eval.sandbox import (
    RolloutCommand,
    RolloutOutcome,
    RolloutSpec,
    SandboxResult,
    Verdict,
    python_ro_binds,
)
from forge_eval.training.backends import ROLLOUT_BACKENDS, RayBackend
from tests.harnesses._policy import TASK_ID, ForgeToolPolicy
from tests.sandbox._sandboxes import needs_bwrap, processes_with
from tests.training._agent_loops import agent_loop_entry, instantiate_agent_loop
from tests.training.conftest import PROXY_ADMIN_KEY, PROXY_SECRET

ray = pytest.importorskip("ray")
from ray.cluster_utils import Cluster  # noqa: E402 (after the skip)

pytestmark = [needs_bwrap, pytest.mark.e2e]

AGENT = """
import json, os, subprocess, urllib.error, urllib.request
import openai

client = openai.OpenAI(max_retries=0)  # OPENAI_BASE_URL / OPENAI_API_KEY from the backend
tools = [{"type": "function", "function": {"name": "bash",
          "parameters": {"type": "object", "properties": {"command": {"type": "string"}}}}}]
messages = [{"role": "user", "content": "create hello.txt containing hi"}]
for _ in range(4):
    reply = client.chat.completions.create(model="policy", messages=messages, tools=tools)
    message = reply.choices[0].message
    messages.append(message.model_dump(exclude_none=True))
    if not message.tool_calls:
        break
    for call in message.tool_calls:
        run = subprocess.run(json.loads(call.function.arguments)["command"], shell=True, capture_output=True)
        messages.append({"role": "tool", "tool_call_id": call.id, "content": run.stdout.decode()})
print(message.content)

def probe(url):
    try:
        return urllib.request.urlopen(url, timeout=3).status
    except urllib.error.HTTPError as e:
        return e.code
    except OSError as e:
        return type(getattr(e, "reason", e)).__name__

json.dump({"control_port": probe(os.environ["HOST_CONTROL"] + "/rollouts"),
           "host_proxy_port": probe(os.environ["HOST_PROXY"])}, open("probes.json", "w"))
"""


def hello_program(agent: Path, **env: str):  # noqa: ANN201
    """Runs AGENT; the verifier (on the rollout's node, as the program's closure) checks the file the
    model's shell call should create and says which node it ran on."""

    async def verify(result: SandboxResult, work: Path) -> Verdict:
        made = work / "hello.txt"
        ok = made.is_file() and made.read_text() == "hi"
        output = {
            "node": ray.get_runtime_context().get_node_id(),
            "probes": json.loads((work / "probes.json").read_text()),
        }
        return Verdict(1.0 if ok else 0.0, output, result.stdout.strip())

    def program(spec: RolloutSpec, work: Path) -> RolloutCommand:
        return RolloutCommand(
            argv=[sys.executable, str(agent)], env=env, ro_binds=[*python_ro_binds(), agent], verify=verify
        )

    return program


@dataclass
class LocalCluster:
    cluster: Cluster
    head: Any
    worker: Any


@pytest.fixture(scope="module")
def cluster() -> Iterator[LocalCluster]:
    """A head (no CPU, no `sandbox`) and one worker raylet with {"sandbox": 2}; nodes are declared dead
    after ~1.5 s of missed health checks instead of the default ~15 s."""
    health = {"health_check_period_ms": 500, "health_check_failure_threshold": 3}
    local = Cluster(
        initialize_head=True,
        head_node_args={"num_cpus": 0, "include_dashboard": False, "_system_config": health},
    )
    try:
        worker = local.add_node(num_cpus=2, resources={"sandbox": 2})
        ray.init(address=local.address, include_dashboard=False, log_to_driver=False)
        yield LocalCluster(local, local.head_node, worker)
    finally:
        ray.shutdown()
        local.shutdown()


def _spec(rollout_id: str, command: list[str], base: str = "http://127.0.0.1:9/r/x/0") -> RolloutSpec:
    return RolloutSpec(rollout_id, 0, "react", {"task_id": rollout_id, "command": command}, base, "key", 60.0)


async def _run(backend: RayBackend, spec: RolloutSpec, deadline: float | None = None) -> RolloutOutcome:
    handle = await backend.start(spec)
    try:
        return await backend.wait(handle, deadline or time.time() + spec.deadline_s)
    finally:
        await backend.stop(handle)


def _parent(pid: int) -> int | None:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[1])
    except OSError:
        return None


def _is_bwrap(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip() == "bwrap"
    except OSError:
        return False


def _sandbox_pids(marker: str) -> set[int]:
    """The sandbox's processes: those whose environment holds `marker`, the bubblewrap processes above them
    (bubblewrap's own environment holds none of the sandbox's variables) and everything below those."""
    found = set(processes_with(marker))
    for pid in list(found):
        while (pid := _parent(pid)) is not None and _is_bwrap(pid):
            found.add(pid)
    parents = {int(e.name): _parent(int(e.name)) for e in Path("/proc").iterdir() if e.name.isdigit()}
    while below := {p for p, parent in parents.items() if parent in found} - found:
        found |= below
    return found


def _alive(pids: set[int]) -> set[int]:
    return {p for p in pids if Path(f"/proc/{p}").exists()}


def _gone(pids: set[int], within_s: float) -> bool:
    end = time.monotonic() + within_s
    while _alive(pids):
        if time.monotonic() > end:
            return False
        time.sleep(0.2)
    return True


def test_rollout_on_the_worker_through_the_real_proxy(
    cluster: LocalCluster, proxy_url: str, proxy_control_url: str, tmp_path: Path
) -> None:
    agent = tmp_path / "agent.py"
    agent.write_text(AGENT)

    async def main():  # noqa: ANN202
        control = HttpProxyControl(proxy_control_url, PROXY_ADMIN_KEY)
        created = await control.create_rollout({"rollout_id": "ray-1", "group_uid": "g", "harness": "react"})
        spec = RolloutSpec("ray-1", 0, "react", {}, proxy_url + created.base_path, created.api_key, 60)
        program = hello_program(agent, HOST_PROXY=proxy_url, HOST_CONTROL=proxy_control_url)
        outcome = await _run(RayBackend(program=program), spec)
        await control.report("ray-1", 0, outcome)
        fetched = await control.fetch("ray-1", 0)
        await control.aclose()
        return outcome, fetched

    outcome, (record, calls) = asyncio.run(main())
    assert outcome.status == "completed" and outcome.exit_code == 0
    assert outcome.reward == 1.0 and "hello.txt" in outcome.answer  # the model's shell call ran there
    assert outcome.verifier_output["node"] == cluster.worker.node_id  # not the head: it has no sandbox slot
    assert outcome.verifier_output["probes"] == {
        "control_port": "ConnectionRefusedError",  # only the data plane is forwarded in, on the worker too
        "host_proxy_port": "ConnectionRefusedError",
    }
    assert record.termination == "completed" and record.reward == 1.0
    assert len(calls) == 2 and all(c.rollout_id == "ray-1" for c in calls)
    assert all(c.prompt_token_ids and c.completion_token_ids for c in calls)
    assert processes_with("FORGE_ROLLOUT_ID=ray-1") == []


def test_a_resource_no_node_has_fails_at_once(cluster: LocalCluster) -> None:
    backend = RayBackend(harness_resources={"react": {"desktop": 1}})
    t0 = time.monotonic()
    with pytest.raises(ForgeError, match=r'needs \{"CPU": 1, "desktop": 1\}.*no node has desktop=1') as e:
        asyncio.run(backend.start(_spec("nodesk", ["/bin/true"])))
    assert time.monotonic() - t0 < 5
    assert "--resources" in (e.value.hint or "")
    with pytest.raises(ForgeError, match="no node has CPU=3"):
        asyncio.run(RayBackend(num_cpus=3).start(_spec("big", ["/bin/true"])))


def test_stop_ends_the_sandbox_on_its_node(cluster: LocalCluster) -> None:
    backend = RayBackend()

    async def main() -> tuple[str, str, str, set[int]]:
        handle = await backend.start(_spec("long", ["/bin/sh", "-c", "echo started; sleep 300 & sleep 300"]))
        end = time.monotonic() + 20
        while len(sandbox := _sandbox_pids("FORGE_ROLLOUT_ID=long")) < 6 and time.monotonic() < end:
            await asyncio.sleep(0.1)
        during = await backend.logs(handle)
        await backend.stop(handle)
        await backend.stop(handle)  # safe twice
        return handle.ref.node, during, await backend.logs(handle), sandbox

    node, during, after, sandbox = asyncio.run(main())
    assert node == cluster.worker.node_id
    assert during.strip() == "started"
    assert after.strip() == "started"  # brought back by stop: the actor is killed right after
    assert len(sandbox) == 6  # bwrap (2), the proxy port's socat, sh and its two sleeps
    assert _alive(sandbox) == set()  # stop() waited for the whole tree
    assert processes_with("FORGE_ROLLOUT_ID=long") == []


@pytest.mark.slow
def test_outcomes_and_program_errors_come_back(cluster: LocalCluster) -> None:
    backend = RayBackend()

    async def main() -> tuple[RolloutOutcome, RolloutOutcome, float]:
        crashed = await _run(backend, _spec("crash", ["/bin/sh", "-c", "exit 7"]))
        t0 = time.monotonic()
        slow = await _run(backend, _spec("slow", ["/bin/sleep", "300"]), deadline=time.time() + 2)
        return crashed, slow, time.monotonic() - t0

    crashed, slow, waited = asyncio.run(main())
    assert (crashed.status, crashed.exit_code) == ("harness_crash", 7)
    assert slow.status == "timeout" and waited < 10
    bad = RolloutSpec(
        "bad", 0, "react", {"task_id": "bad", "command": "ls"}, "http://127.0.0.1:9/r/x/0", "k", 10
    )
    with pytest.raises(UsageError, match="`command` must be a non-empty list"):  # the node's error, as is
        asyncio.run(backend.start(bad))


def test_a_loopback_proxy_on_another_node_is_refused(cluster: LocalCluster, monkeypatch) -> None:  # noqa: ANN001
    """On a real cluster the trainer's 127.0.0.1 is not the worker's: say so instead of a harness that
    cannot connect (here every node shares one address, so the trainer's is shown as another)."""
    monkeypatch.setattr("forge_eval.training.backends._ray._node_ip", lambda: "10.255.0.1")
    with pytest.raises(
        UsageError, match=r"proxy URL http://127\.0\.0\.1:9/r/x/0 is on the trainer's loopback"
    ):
        asyncio.run(RayBackend().start(_spec("far", ["/bin/true"])))


@pytest.mark.slow
def test_a_killed_raylet_evicts_the_rollout_and_leaves_nothing(cluster: LocalCluster) -> None:
    """A second worker, the only one with `doomed`, loses its raylet (SIGKILL) mid-rollout: the rollout ends
    `evicted` (which the trainer discards as an infrastructure failure), and its sandbox dies with the
    actor's process."""
    doomed = cluster.cluster.add_node(num_cpus=1, resources={"doomed": 1})
    backend = RayBackend(resources={"doomed": 1})

    async def main() -> tuple[RolloutOutcome, float, set[int], str]:
        spec = _spec("lost", ["/bin/sh", "-c", "sleep 300 & sleep 300"])
        handle = await backend.start(spec)
        try:
            assert handle.ref.node == doomed.node_id
            end = time.monotonic() + 20
            while len(sandbox := _sandbox_pids("FORGE_ROLLOUT_ID=lost")) < 6 and time.monotonic() < end:
                await asyncio.sleep(0.1)
            waiting = asyncio.ensure_future(backend.wait(handle, time.time() + 120))
            await asyncio.sleep(0.5)
            t0 = time.monotonic()
            # left unreaped: Ray's own worker check sees a zombie raylet alive; the actor's lifeline does not
            doomed.all_processes["raylet"][0].process.kill()
            outcome = await waiting
            return outcome, time.monotonic() - t0, sandbox, await backend.logs(handle)
        finally:
            await backend.stop(handle)

    try:
        outcome, waited, sandbox, logs = asyncio.run(main())
        assert len(sandbox) == 6, "the sandbox never started"
        assert outcome == RolloutOutcome("evicted")
        assert logs.startswith(f"(no logs: the rollout's actor on node {doomed.node_id} is gone")
        assert waited < 30
        assert _gone(sandbox, within_s=20)
        assert processes_with("FORGE_ROLLOUT_ID=lost") == []
    finally:
        cluster.cluster.remove_node(doomed, allow_graceful=False)


@pytest.mark.verl
@pytest.mark.slow
def test_react_rollout_of_a_forgelab_task_on_the_worker(
    cluster: LocalCluster, tmp_path: Path, monkeypatch
) -> None:  # noqa: ANN001
    """`backend: ray` in agent_loops.yaml as veRL instantiates it, the default program on a forgelab task
    with the `react` harness: the task's world and tool server are set up in the actor on the worker (its
    sandbox reaches `forge-tool` through a forward there), forgelab's own checks grade it there, and the
    recorded calls become training outputs on the trainer."""
    from forge_eval.training.verl import task_rows

    records = tmp_path / "records"
    with serve_in_thread(ScriptedUpstream(policy=ForgeToolPolicy()).app()) as upstream:
        config = ProxyConfig(
            records_dir=records, secret=PROXY_SECRET, admin_key=PROXY_ADMIN_KEY, upstreams=[upstream.url]
        )
        app = create_app(config)
        proxy = ServerThread(app, control=create_control_app(app)).start()
        try:
            monkeypatch.setenv("FORGE_PROXY_ADMIN_KEY", PROXY_ADMIN_KEY)
            entry = agent_loop_entry()
            entry.backend, entry.proxy_url, entry.control_url, entry.deadline_s = (
                "ray",
                proxy.url,
                proxy.control_url,
                120,
            )
            loop = instantiate_agent_loop(entry)
            assert isinstance(loop.backend, RayBackend)
            [row] = task_rows("forgelab", select_tasks(task_ids=TASK_ID).samples, harness="react")
            outputs = asyncio.run(loop.run({"temperature": 1.0}, uid="g1", **row))
        finally:
            proxy.stop()

    [(rollout_id, attempt)] = list(iter_attempts(records))
    record = read_rollout(records, rollout_id, attempt)
    assert record.termination == "completed" and record.reward == 1.0, record
    assert "415 555 0142" in record.answer  # the phone number the task's tool returned in the sandbox
    calls = read_calls(records, rollout_id, attempt)
    assert "contacts_search" in json.dumps(calls[0].returned_response)
    assert all(c.prompt_token_ids and c.completion_token_ids for c in calls)
    assert outputs and {o.reward_score for o in outputs} == {1.0}
    assert processes_with(f"FORGE_ROLLOUT_ID={rollout_id}") == []


def test_registered_as_ray() -> None:
    assert ROLLOUT_BACKENDS.get("ray") is RayBackend
    assert "Ray actor per rollout" in RayBackend.description


@pytest.mark.verl
def test_agent_loops_yaml_selects_ray(monkeypatch) -> None:  # noqa: ANN001
    """`backend: ray` in training/configs/agent_loops.yaml, as veRL instantiates it, and a mapping with
    options (hydra hands them over as DictConfigs)."""
    monkeypatch.setenv("FORGE_PROXY_ADMIN_KEY", PROXY_ADMIN_KEY)
    entry = agent_loop_entry()
    entry.backend = "ray"
    assert isinstance(instantiate_agent_loop(entry).backend, RayBackend)
    entry.backend = {"_target_": "forge_eval.training.backends.RayBackend", "resources": {"sandbox": 2}}
    backend = instantiate_agent_loop(entry).backend
    assert backend.need("react") == {"CPU": 1.0, "sandbox": 2.0}
    assert type(backend.resources) is dict
