"""`forge-eval run --cluster k8s:NAMESPACE` against the kmock Kubernetes API emulator (real HTTP, the
official client). No kube-apiserver or kubelet runs here: the test plays the kubelet, running each Job's
pod command (`python -m forge_eval.runner._worker` with the Job's environment) on this machine, where
the "claim" is a temporary folder, and then writing the Job's status."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from click.testing import CliRunner

from forge_eval.runner import RunSpec, execute_sharded, plan_run
from forge_eval.runner.executors import JobSettings, KubernetesExecutor
from tests.runner._recording_server import recording_server

kmock = pytest.importorskip("kmock", reason="kmock missing: pip install -e '.[dev]'")
client = pytest.importorskip("kubernetes.client")

from tests._kmock import Emulator  # noqa: E402

MODEL = "openai-api/rec/m"
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def emulator() -> Iterator[Emulator]:
    emulator = Emulator(jobs=True)
    yield emulator
    emulator.close()


class Kubelet:
    """Runs every new Job's pod command here and writes the Job's status: succeeded on exit 0, else
    Failed; `fail` names shard keys whose Jobs fail with DeadlineExceeded without running."""

    def __init__(self, emulator: Emulator, namespace: str, fail: set[str] = frozenset()) -> None:
        self.emulator, self.namespace, self.fail = emulator, namespace, fail
        self.jobs: list[Any] = []
        self._done: set[str] = set()
        self.error: BaseException | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def __enter__(self) -> Kubelet:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(60)
        if self.error is not None:
            raise self.error

    def _loop(self) -> None:
        try:
            while not self._stop.wait(0.1):
                for job in self.emulator.batch.list_namespaced_job(self.namespace).items:
                    if job.metadata.name not in self._done:
                        self._done.add(job.metadata.name)
                        self.jobs.append(job)
                        self._run(job)
        except BaseException as e:  # raised again at the block's end; the driver would wait forever
            self.error = e

    def _run(self, job: Any) -> None:
        shard = job.metadata.labels["forge-eval.io/shard"]
        if shard in self.fail:
            status = {"failed": 1, "conditions": [_condition("Failed", "DeadlineExceeded")]}
        else:
            container = job.spec.template.spec.containers[0]
            env = {**os.environ, **{e.name: e.value for e in container.env}}
            command = [sys.executable, *container.command[1:]]
            done = subprocess.run(command, env=env, cwd=ROOT, capture_output=True, text=True, timeout=300)
            assert "FORGE_SHARD " in done.stdout, done.stderr[-3000:]
            ok = done.returncode == 0
            status = {"succeeded": 1} if ok else {"failed": 1, "conditions": [_condition("Failed", "Error")]}
        name = job.metadata.name
        spec = {"nodeName": "node-7", "containers": [{"name": "shard", "image": "i"}]}
        pod = {"metadata": {"name": f"{name}-x1", "labels": {"job-name": name}}, "spec": spec}
        self.emulator.core.create_namespaced_pod(self.namespace, pod)
        self.emulator.batch.patch_namespaced_job_status(name, self.namespace, {"status": status})


def _condition(kind: str, reason: str) -> dict[str, str]:
    return {"type": kind, "status": "True", "reason": reason, "message": reason}


_namespaces = iter(range(10**6))


@pytest.fixture()
def namespace() -> str:
    return f"shards-{next(_namespaces)}"


@pytest.fixture(autouse=True)
def _api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REC_API_KEY", "test")


def _executor(emulator: Emulator, namespace: str, mount: Path) -> KubernetesExecutor:
    image = "registry.local/forge-eval:0.1"
    settings = JobSettings(image=image, claim="forge-runs", mount=mount, secret="keys")
    return KubernetesExecutor(namespace, settings=settings, api_client=emulator.api_client, poll_s=0.05)


def _run(url: str, out: Path, executor: KubernetesExecutor) -> dict[str, Any]:
    spec = RunSpec("forgelab", (0,), out, epochs=1, model=MODEL, model_base_url=url, quick=True)
    return execute_sharded(plan_run(spec), executor, shards=2).results


@pytest.mark.slow
def test_each_shard_is_a_locked_down_job_and_the_run_merges(emulator, namespace, tmp_path) -> None:
    out = tmp_path / "runs" / "forgelab"
    with recording_server() as (url, seen), Kubelet(emulator, namespace) as kubelet:
        results = _run(url, out, _executor(emulator, namespace, tmp_path / "runs"))
    assert results["status"] == "complete" and len(seen) == 8
    assert len(pd.read_csv(out / "trials.csv")) == 8
    assert len(kubelet.jobs) == 2
    job = kubelet.jobs[0]
    labels = job.metadata.labels
    assert labels["app.kubernetes.io/managed-by"] == "forge-eval"
    assert labels["forge-eval.io/shard"] == "seed0-1of2"
    assert job.spec.ttl_seconds_after_finished == 3600 and job.spec.active_deadline_seconds == 6 * 3600
    assert job.spec.backoff_limit == 2
    pod = job.spec.template.spec
    assert pod.automount_service_account_token is False and pod.restart_policy == "Never"
    assert pod.security_context.run_as_non_root is True and pod.security_context.run_as_user == 1000
    assert pod.volumes[0].persistent_volume_claim.claim_name == "forge-runs"
    container = pod.containers[0]
    assert container.image == "registry.local/forge-eval:0.1"
    assert container.resources.requests == container.resources.limits == {"cpu": "2", "memory": "4Gi"}
    assert container.volume_mounts[0].mount_path == str(tmp_path / "runs")
    assert container.security_context.allow_privilege_escalation is False
    assert container.security_context.capabilities.drop == ["ALL"]
    assert container.env_from[0].secret_ref.name == "keys"


@pytest.mark.slow
def test_a_failed_job_leaves_the_run_partial_and_resume_runs_only_it(emulator, namespace, tmp_path) -> None:
    out = tmp_path / "runs" / "forgelab"
    executor = _executor(emulator, namespace, tmp_path / "runs")
    with recording_server() as (url, _seen):
        with Kubelet(emulator, namespace, fail={"seed0-2of2"}):
            first = _run(url, out, executor)
        assert first["status"] == "partial"
        shards = (out / "shards.json").read_text()
        assert "DeadlineExceeded" in shards
        for job in emulator.batch.list_namespaced_job(namespace).items:  # the TTL's work, done here
            emulator.batch.delete_namespaced_job(job.metadata.name, namespace)
        with Kubelet(emulator, namespace) as kubelet:
            second = _run(url, out, _executor(emulator, namespace, tmp_path / "runs"))
    assert second["status"] == "complete"
    assert [job.metadata.labels["forge-eval.io/shard"] for job in kubelet.jobs] == ["seed0-2of2"]
    assert len(pd.read_csv(out / "trials.csv")) == 8


def test_out_must_lie_on_the_claim(emulator, namespace, tmp_path) -> None:
    from forge_eval._errors import UsageError

    claim = "is not on the run directories' claim"
    with recording_server() as (url, _seen), pytest.raises(UsageError, match=claim):
        _run(url, tmp_path / "elsewhere", _executor(emulator, namespace, tmp_path / "runs"))


def test_cluster_errors_are_one_line_messages(monkeypatch: pytest.MonkeyPatch) -> None:
    from forge_eval._cli.main import cli

    for key in ("FORGE_K8S_IMAGE", "FORGE_K8S_CLAIM", "FORGE_K8S_MOUNT", "FORGE_CLUSTER"):
        monkeypatch.delenv(key, raising=False)
    def error(*cluster: str) -> Exception:
        args = ["run", "forgelab", "--quick", *cluster]
        return CliRunner().invoke(cli, args, standalone_mode=False, catch_exceptions=True).exception

    unknown = error("--cluster", "slurm:x")
    assert unknown.exit_code == 2
    assert str(unknown) == (
        "unknown cluster 'slurm:x'. Valid clusters: k8s[:NAMESPACE], local, ray://HOST:PORT, ray:auto"
    )
    k8s = error("--cluster", "k8s:evals")
    assert k8s.exit_code == 2 and "--cluster k8s needs FORGE_K8S_IMAGE" in str(k8s)
    alone = error("--shards", "4")
    assert alone.exit_code == 2 and str(alone).startswith("--shards applies to a run on a cluster")
