"""The `kubernetes` rollout backend against the kmock Kubernetes API emulator (real HTTP, official client).

No kube-apiserver or kubelet can run here: kmock stores objects and serves
create / read / list / patch / delete, but schedules nothing, so these tests play the kubelet by patching
pod status (Running, Succeeded, Failed with DeadlineExceeded / Evicted / OOMKilled ...) and configure the
pod-log endpoint (kmock would answer it with the pod's JSON). It also ignores label selectors, which is why
the backend filters the listed pods by label itself (tested below).
"""

import asyncio
import time
from collections.abc import Iterator
from typing import Any

import pytest

kmock = pytest.importorskip("kmock", reason="kmock missing: pip install -e '.[dev]'")
client = pytest.importorskip("kubernetes.client", reason="kubernetes missing: pip install -e '.[dev]'")

from forge_eval._errors import ForgeError  # noqa: E402
from forge_eval.sandbox import RolloutSpec  # noqa: E402
from forge_eval.training.backends import ROLLOUT_BACKENDS, KubernetesBackend  # noqa: E402
from forge_eval.training.backends._kubernetes import CreationBudget  # noqa: E402
from tests._kmock import Emulator  # noqa: E402

LABEL = "forge-eval.io"


@pytest.fixture(scope="module")
def emulator() -> Iterator[Emulator]:
    emulator = Emulator()
    yield emulator
    emulator.close()


_namespaces = iter(range(10**6))


@pytest.fixture()
def namespace() -> str:
    return f"ns-{next(_namespaces)}"


def _backend(emulator: Emulator, namespace: str, **kw: Any) -> KubernetesBackend:
    return KubernetesBackend(namespace=namespace, api_client=emulator.api_client, poll_s=0.05, **kw)


def _spec(rollout_id: str = "task/7-abc", deadline_s: float = 60.0) -> RolloutSpec:
    return RolloutSpec(
        rollout_id=rollout_id,
        attempt=1,
        harness="codex",
        task={"task_id": "task/7", "command": ["codex-rollout", "--task", "7"]},
        proxy_base_url="http://forge-proxy.forge.svc:8400/r/task-7-abc/1",
        api_key="signed-key",
        deadline_s=deadline_s,
        group="grp-1",
    )


def _container(state: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"name": "harness", "image": "i", "imageID": "",
             "ready": False, "restartCount": 0, "state": state}]


def _pods(emulator: Emulator, namespace: str) -> list[Any]:
    return emulator.core.list_namespaced_pod(namespace).items


def test_pod_manifest_as_created(emulator: Emulator, namespace: str) -> None:
    backend = _backend(emulator, namespace, images={"codex": "registry.local/forge-codex:0.171.0"})

    async def go() -> Any:
        handle = await backend.start(_spec())
        (pod,) = _pods(emulator, namespace)
        await backend.stop(handle)
        return handle, pod

    handle, pod = asyncio.run(go())
    labels = pod.metadata.labels
    assert labels[f"{LABEL}/rollout"] == "task-7-abc" and labels[f"{LABEL}/attempt"] == "1"
    assert labels[f"{LABEL}/group"] == "grp-1" and labels[f"{LABEL}/harness"] == "codex"
    assert pod.metadata.annotations[f"{LABEL}/rollout-id"] == "task/7-abc"
    assert pod.metadata.name.startswith("forge-task-7-abc-1-") and len(pod.metadata.name) <= 63
    spec = pod.spec
    assert spec.restart_policy == "Never" and spec.active_deadline_seconds == 90  # 60 s + 30 s grace
    assert spec.automount_service_account_token is False
    (c,) = spec.containers
    assert c.image == "registry.local/forge-codex:0.171.0"
    assert c.command == ["codex-rollout", "--task", "7"]
    assert c.resources.requests == c.resources.limits == {"cpu": "2", "memory": "2Gi"}
    assert c.security_context.read_only_root_filesystem and c.security_context.capabilities.drop == ["ALL"]
    assert c.security_context.run_as_non_root and c.security_context.run_as_user == 1000
    assert spec.security_context.fs_group == 1000  # the emptyDir work volume is the agent's
    env = {e.name: e.value for e in c.env}
    assert env["OPENAI_BASE_URL"] == "http://forge-proxy.forge.svc:8400/r/task-7-abc/1/v1"
    assert env["FORGE_PROXY_API_KEY"] == env["OPENAI_API_KEY"] == "signed-key"
    assert _pods(emulator, namespace) == []  # stop() deleted it


def _final(phase: str, reason: str | None = None, **state: Any) -> dict[str, Any]:
    status: dict[str, Any] = {"phase": phase, **({"reason": reason} if reason else {})}
    return {**status, "containerStatuses": _container(state)} if state else status


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        (_final("Succeeded", terminated={"exitCode": 0}), ("completed", 0)),
        (_final("Failed", terminated={"exitCode": 3}), ("harness_crash", 3)),
        (_final("Failed", terminated={"exitCode": 137, "reason": "OOMKilled"}), ("oom", 137)),
        (_final("Failed", "DeadlineExceeded"), ("timeout", None)),
        (_final("Failed", "Evicted"), ("evicted", None)),
        (_final("Pending", waiting={"reason": "InvalidImageName"}), ("aborted", None)),
    ],
    ids=["succeeded", "failed", "oomkilled", "deadline", "evicted", "bad-image"],
)
def test_status_transitions(emulator: Emulator, namespace: str, status: dict, expected: tuple) -> None:
    """Pending -> Running -> the final status the kubelet reports, each mapped to the rollout's status."""
    backend = _backend(emulator, namespace)

    async def go() -> Any:
        handle = await backend.start(_spec())
        name = handle.ref.name
        waiting = asyncio.create_task(backend.wait(handle, time.time() + 30))
        emulator.set_status(namespace, name, {"phase": "Pending"})
        await asyncio.sleep(0.2)
        emulator.set_status(namespace, name, {"phase": "Running"})
        await asyncio.sleep(0.2)
        assert not waiting.done()  # still running
        emulator.set_status(namespace, name, status)
        outcome = await asyncio.wait_for(waiting, 10)
        await backend.stop(handle)
        return outcome

    outcome = asyncio.run(go())
    assert (outcome.status, outcome.exit_code) == expected


@pytest.mark.parametrize("trusted", [True, False], ids=["trusted-image", "default"])
def test_verdict_from_the_pod_log(emulator: Emulator, namespace: str, trusted: bool) -> None:
    """The pod's log is the harness's own output: a grade in it counts only from an image trusted to grade
    (the default ignores it, as the agent could print one), while its answer is taken either way."""
    verdict = '{"reward": 0.5, "answer": "42", "verifier_output": {"ok": 1}}'
    emulator.logs(f"harness output\nFORGE_VERDICT {verdict}\n")
    backend = _backend(emulator, namespace, trust_pod_verdict=trusted)

    async def go() -> Any:
        handle = await backend.start(_spec())
        emulator.set_status(namespace, handle.ref.name, {"phase": "Succeeded"})
        outcome = await backend.wait(handle, time.time() + 10)
        logs = await backend.logs(handle)
        await backend.stop(handle)
        return outcome, logs

    outcome, logs = asyncio.run(go())
    graded = (0.5, {"ok": 1}) if trusted else (None, None)
    assert (outcome.status, outcome.answer) == ("completed", "42")
    assert (outcome.reward, outcome.verifier_output) == graded
    assert logs.startswith("harness output")


def test_deadline_deletes_the_pod_and_reports_timeout(emulator: Emulator, namespace: str) -> None:
    backend = _backend(emulator, namespace)

    async def go() -> Any:
        handle = await backend.start(_spec())
        emulator.set_status(namespace, handle.ref.name, {"phase": "Running"})
        return await backend.wait(handle, time.time() + 0.5)

    assert asyncio.run(go()).status == "timeout"
    assert _pods(emulator, namespace) == []


def test_a_vanished_pod_is_evicted(emulator: Emulator, namespace: str) -> None:
    backend = _backend(emulator, namespace)

    async def go() -> Any:
        handle = await backend.start(_spec())
        waiting = asyncio.create_task(backend.wait(handle, time.time() + 10))
        await asyncio.sleep(0.2)
        emulator.core.delete_namespaced_pod(handle.ref.name, namespace)  # a drained node, kubectl delete
        return await waiting

    assert asyncio.run(go()).status == "evicted"


def test_label_selection_keeps_backends_apart(emulator: Emulator, namespace: str) -> None:
    """Two trainers in one namespace: each sees and deletes only its own pods (kmock ignores selectors)."""
    first, second = _backend(emulator, namespace), _backend(emulator, namespace)

    async def go() -> Any:
        mine = await first.start(_spec("mine"))
        theirs = await second.start(_spec("theirs"))
        emulator.set_status(namespace, theirs.ref.name, {"phase": "Succeeded"})
        emulator.set_status(namespace, mine.ref.name, {"phase": "Running"})
        outcome = await second.wait(theirs, time.time() + 10)
        await second.stop(theirs)
        left = [p.metadata.labels[f"{LABEL}/rollout"] for p in _pods(emulator, namespace)]
        await first.stop(mine)
        return outcome, left, set(first._pods)

    outcome, left, seen = asyncio.run(go())
    assert outcome.status == "completed"
    assert left == ["mine"]
    selected = emulator.core.list_namespaced_pod(namespace, label_selector=f"{LABEL}/rollout=mine").items
    assert selected == []  # both gone after stop()


def test_concurrency_limit_and_creation_budget(emulator: Emulator, namespace: str) -> None:
    backend = _backend(emulator, namespace, max_concurrent=1)

    async def go() -> Any:
        first = await backend.start(_spec("a"))
        second = asyncio.create_task(backend.start(_spec("b")))
        await asyncio.sleep(0.3)
        blocked = not second.done() and len(_pods(emulator, namespace)) == 1
        await backend.stop(first)
        handle = await asyncio.wait_for(second, 5)
        await backend.stop(handle)
        return blocked

    assert asyncio.run(go())

    async def budget() -> list[float]:
        limit, times = CreationBudget(2, window_s=0.6), []
        t0 = time.monotonic()
        for _ in range(3):
            await limit.take()
            times.append(time.monotonic() - t0)
        return times

    times = asyncio.run(budget())
    assert times[1] < 0.3 and times[2] >= 0.6  # the third creation waited for the window to move on


def test_ttl_sweep_removes_abandoned_pods(emulator: Emulator, namespace: str) -> None:
    for name, created in (("forge-old", "2020-01-01T00:00:00Z"), ("forge-new", None)):
        meta = client.V1ObjectMeta(
            name=name,
            labels={"app.kubernetes.io/managed-by": "forge-eval"},
            creation_timestamp=created or time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        )
        pod = client.V1Pod(metadata=meta, spec=client.V1PodSpec(containers=[client.V1Container(name="c")]))
        emulator.core.create_namespaced_pod(namespace, pod)
    backend = _backend(emulator, namespace, ttl_s=3600)

    async def go() -> None:
        await backend.stop(await backend.start(_spec()))

    asyncio.run(go())
    assert [p.metadata.name for p in _pods(emulator, namespace)] == ["forge-new"]


def test_registered_and_missing_cluster_is_a_message(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:  # noqa: ANN001
    assert ROLLOUT_BACKENDS.get("kubernetes") is KubernetesBackend
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "missing"))
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    with pytest.raises(ForgeError, match="no Kubernetes cluster configuration") as info:
        KubernetesBackend()
    assert "KUBECONFIG" in str(info.value)


def test_shipped_manifests_are_accepted_by_the_client(emulator: Emulator) -> None:
    """Every namespaced object in training/deploy/k8s goes through the official client's create_from_dict
    (kmock cannot create cluster-scoped objects, so the Namespace is only checked for its name)."""
    from pathlib import Path

    import yaml
    from kubernetes import utils

    manifests = sorted((Path(__file__).parents[2] / "training/deploy/k8s").glob("*.yaml"))
    assert len(manifests) >= 5
    created = []
    for path in manifests:
        for doc in yaml.safe_load_all(path.read_text()):
            if doc["kind"] == "Namespace":
                assert doc["metadata"]["name"] == "forge-rollouts"
                continue
            for o in utils.create_from_dict(emulator.api_client, doc, namespace="forge-rollouts"):
                created.append(type(o).__name__)
    expected = {"V1Role", "V1RoleBinding", "V1NetworkPolicy", "V1Deployment", "V1Service", "V1Pod"}
    assert expected <= set(created)
    example = emulator.core.list_namespaced_pod("forge-rollouts").items[0]
    assert example.spec.restart_policy == "Never" and example.spec.automount_service_account_token is False


def test_a_command_needing_host_ports_is_refused_and_cleaned_up(emulator: Emulator, namespace: str) -> None:
    """A real harness's task tools are served on the trainer's host (`harness_rollout`): a pod cannot reach
    them, so the backend refuses the rollout before creating a pod and frees what the program set up."""
    from forge_eval.sandbox import RolloutCommand

    cleaned = []

    async def cleanup() -> None:
        cleaned.append(True)

    def program(spec: RolloutSpec, work: Any) -> RolloutCommand:
        return RolloutCommand(argv=["codex"], forwards={41234: "127.0.0.1:41234"}, cleanup=cleanup)

    backend = _backend(emulator, namespace, program=program)
    with pytest.raises(ForgeError, match="41234: the task's tool server"):
        asyncio.run(backend.start(_spec()))
    assert cleaned == [True] and _pods(emulator, namespace) == []
