"""`KubernetesExecutor` (`--cluster k8s[:NAMESPACE]`): each shard a Kubernetes Job.

The Job's pod runs `python -m forge_eval.runner._worker` in forge-eval's image with the shard's job in
its environment, and writes its logs into the run directory on a PersistentVolumeClaim mounted at the
same path as on the driver (the driver reads them there: `--out` must lie under the mount). The pod has
no service-account token (no API rights), runs as a non-root user without privilege escalation or
capabilities, asks for CPU and memory (requests = limits) and one unit of each extended resource
`forge-eval.io/<name>` a sample needs (`browser`, `desktop`, `sandbox`: nodes advertise them), and is
labelled; the Job has a deadline (`activeDeadlineSeconds`) and is deleted by the cluster
`ttlSecondsAfterFinished` after it ends. A pod lost with its node is retried by the Job (`backoffLimit`),
resuming from the logs on the claim.

Settings come from the environment (`JobSettings.from_env`). Tested against the kmock API emulator only.
"""

from __future__ import annotations

import hashlib
import os
import re
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from forge_eval._errors import ForgeError, UsageError
from forge_eval.runner._worker import JOB_ENV, ShardJob, ShardOutcome
from forge_eval.runner.executors._executor import Executor, ShardHandle

LABEL = "forge-eval.io"
MANAGED = {"app.kubernetes.io/managed-by": "forge-eval", "app.kubernetes.io/component": "shard"}
_UNSAFE = re.compile(r"[^a-z0-9-]+")


@dataclass(frozen=True)
class JobSettings:
    """What every shard's Job gets.

    Attributes:
        image: forge-eval's image (the same version as the driver's).
        claim: The PersistentVolumeClaim holding the run directory.
        mount: Where the claim is mounted, in the pod and on the driver (`--out` lies under it).
        cpu, memory: Requests = limits of the shard's container.
        deadline_s: `activeDeadlineSeconds` of a shard's Job.
        ttl_s: `ttlSecondsAfterFinished`: the cluster deletes a finished Job (and its pod) after it.
        retries: `backoffLimit`: pods a Job may start again (a lost node).
        secret: A Secret whose keys become the pod's environment (API keys of the model endpoint).
        service_account: The pod's service account (it gets no token either way).
    """

    image: str
    claim: str
    mount: Path
    cpu: str = "2"
    memory: str = "4Gi"
    deadline_s: int = 6 * 3600
    ttl_s: int = 3600
    retries: int = 2
    secret: str | None = None
    service_account: str | None = None

    @classmethod
    def from_env(cls) -> JobSettings:
        """FORGE_K8S_IMAGE, FORGE_K8S_CLAIM and FORGE_K8S_MOUNT (required); FORGE_K8S_CPU, _MEMORY,
        _DEADLINE_S, _TTL_S, _SECRET, _SERVICE_ACCOUNT."""
        env = os.environ
        missing = [f"FORGE_K8S_{k}" for k in ("IMAGE", "CLAIM", "MOUNT") if not env.get(f"FORGE_K8S_{k}")]
        if missing:
            raise UsageError(
                f"--cluster k8s needs {', '.join(missing)}",
                "set the image, the run directory's PersistentVolumeClaim and its mount path "
                "(docs: Running on a cluster)",
            )
        return cls(
            image=env["FORGE_K8S_IMAGE"],
            claim=env["FORGE_K8S_CLAIM"],
            mount=Path(env["FORGE_K8S_MOUNT"]),
            cpu=env.get("FORGE_K8S_CPU", cls.cpu),
            memory=env.get("FORGE_K8S_MEMORY", cls.memory),
            deadline_s=int(env.get("FORGE_K8S_DEADLINE_S", cls.deadline_s)),
            ttl_s=int(env.get("FORGE_K8S_TTL_S", cls.ttl_s)),
            secret=env.get("FORGE_K8S_SECRET") or None,
            service_account=env.get("FORGE_K8S_SERVICE_ACCOUNT") or None,
        )


@dataclass
class _Job:
    name: str
    submitted: str = field(default_factory=lambda: datetime.now(UTC).isoformat(timespec="seconds"))


def _api(api_client: Any) -> tuple[Any, Any]:
    try:
        # optional dependency (the `k8s` extra)
        from kubernetes import client, config
    except ImportError:
        raise ForgeError(
            "--cluster k8s needs the `kubernetes` Python client", hint="pip install 'forge-eval[k8s]'"
        ) from None
    if api_client is None:
        try:
            config.load_incluster_config()
        except config.ConfigException:
            try:
                config.load_kube_config()
            except (config.ConfigException, OSError) as e:
                raise ForgeError(
                    f"no Kubernetes cluster configuration found: {e}",
                    hint="run inside the cluster, or point KUBECONFIG at one",
                ) from None
        api_client = client.ApiClient()
    return client.BatchV1Api(api_client), client.CoreV1Api(api_client)


class KubernetesExecutor(Executor):
    """Shards as Jobs in `address` (a namespace; default `default`)."""

    name = "kubernetes"
    schemes = ("k8s", "kubernetes")
    forms = ("k8s[:NAMESPACE]",)

    def __init__(
        self,
        address: str = "",
        shared: bool = True,
        settings: JobSettings | None = None,
        api_client: Any = None,
        poll_s: float = 2.0,
    ) -> None:
        super().__init__(address or "default", shared=True)  # logs go to the claim, never back through us
        self.settings = settings or JobSettings.from_env()
        self.batch, self.core = _api(api_client)
        self.poll_s = poll_s

    def where(self) -> str:
        return f"kubernetes namespace {self.address}"

    def check(self, needs: Mapping[str, float], benchmark: str) -> None:
        from kubernetes.client.exceptions import ApiException  # optional dependency (the `k8s` extra)

        try:
            self.batch.list_namespaced_job(self.address, limit=1)
        except (ApiException, OSError) as e:
            raise ForgeError(
                f"cannot list Jobs in Kubernetes namespace {self.address}: {getattr(e, 'reason', e)}",
                "check the namespace and that this identity may create, read and delete Jobs there",
            ) from None

    def capacity(self, needs: Mapping[str, float]) -> int:
        return 8  # the cluster queues the rest; more shards only add per-shard start-up

    def manifest(self, job: ShardJob) -> dict[str, Any]:
        """The Job of one shard."""
        s, shard, spec = self.settings, job.shard, job.spec
        out = spec.out.resolve()
        if not out.is_relative_to(s.mount):
            raise UsageError(
                f"--out {spec.out} is not on the run directories' claim mounted at {s.mount}",
                f"pass --out {s.mount}/<run> (FORGE_K8S_MOUNT)",
            )
        run = hashlib.sha256(str(out).encode()).hexdigest()[:10]
        ours = {"run": run, "shard": shard.key, "seed": str(shard.seed)}
        labels = {**MANAGED, **{f"{LABEL}/{k}": v for k, v in ours.items()}}
        extended = {f"{LABEL}/{k}": str(int(v)) for k, v in job.needs.items() if k != "CPU"}
        limits = {"cpu": s.cpu, "memory": s.memory, **extended}
        container: dict[str, Any] = {
            "name": "shard",
            "image": s.image,
            "command": ["python", "-m", "forge_eval.runner._worker"],
            "env": [{"name": JOB_ENV, "value": job.to_json()}, {"name": "INSPECT_DISPLAY", "value": "none"}],
            "resources": {"requests": limits, "limits": limits},
            "volumeMounts": [{"name": "runs", "mountPath": str(s.mount)}],
            "securityContext": {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}},
        }
        if s.secret:
            container["envFrom"] = [{"secretRef": {"name": s.secret}}]
        pod: dict[str, Any] = {
            "restartPolicy": "Never",
            "automountServiceAccountToken": False,
            "securityContext": {"runAsNonRoot": True, "runAsUser": 1000, "runAsGroup": 1000, "fsGroup": 1000},
            "containers": [container],
            "volumes": [{"name": "runs", "persistentVolumeClaim": {"claimName": s.claim}}],
        }
        if s.service_account:
            pod["serviceAccountName"] = s.service_account
        stem = _UNSAFE.sub("-", shard.key.lower()).strip("-")
        return {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": f"forge-{run}-{stem}-{uuid.uuid4().hex[:5]}", "labels": labels},
            "spec": {
                "backoffLimit": s.retries,
                "activeDeadlineSeconds": s.deadline_s,
                "ttlSecondsAfterFinished": s.ttl_s,
                "template": {"metadata": {"labels": labels}, "spec": pod},
            },
        }

    def submit(self, job: ShardJob) -> ShardHandle:
        manifest = self.manifest(job)
        self.batch.create_namespaced_job(self.address, manifest)
        return ShardHandle(job, _Job(manifest["metadata"]["name"]))

    def wait(self, handles: Sequence[ShardHandle]) -> tuple[ShardHandle, ShardOutcome]:
        while True:
            for handle in handles:
                outcome = self._outcome(handle)
                if outcome is not None:
                    return handle, outcome
            time.sleep(self.poll_s)

    def _outcome(self, handle: ShardHandle) -> ShardOutcome | None:
        from kubernetes.client.exceptions import ApiException  # optional dependency (the `k8s` extra)

        key = handle.job.shard.key
        try:
            job = self.batch.read_namespaced_job(handle.ref.name, self.address)
        except ApiException as e:
            if e.status != 404:
                raise
            now = datetime.now(UTC).isoformat(timespec="seconds")
            return ShardOutcome(key, "", "", handle.ref.submitted, now, f"Job {handle.ref.name} disappeared")
        status = job.status
        if status is None:  # not started yet
            return None
        failed = next((c for c in status.conditions or [] if c.type == "Failed" and c.status == "True"), None)
        if not status.succeeded and failed is None:
            return None
        started = _iso(status.start_time) or handle.ref.submitted
        ended = _iso(status.completion_time) or datetime.now(UTC).isoformat(timespec="seconds")
        error = None
        if not status.succeeded:
            error = f"Job {handle.ref.name} failed: {failed.reason or failed.message}"
        return ShardOutcome(key, "", self._node(handle.ref.name), started, ended, error)

    def _node(self, job_name: str) -> str:
        """The node of the Job's (last) pod, as the cluster placed it ("" when its pods are gone)."""
        from kubernetes.client.exceptions import ApiException  # optional dependency (the `k8s` extra)

        try:
            pods = self.core.list_namespaced_pod(self.address, label_selector=f"job-name={job_name}").items
        except ApiException:
            return ""
        mine = [p for p in pods if (p.metadata.labels or {}).get("job-name") == job_name]
        return next((p.spec.node_name for p in reversed(mine) if p.spec and p.spec.node_name), "")

    def cancel(self, handle: ShardHandle) -> None:
        from kubernetes.client.exceptions import ApiException  # optional dependency (the `k8s` extra)

        try:
            self.batch.delete_namespaced_job(handle.ref.name, self.address, propagation_policy="Background")
        except ApiException as e:
            if e.status != 404:
                raise


def _iso(moment: datetime | None) -> str | None:
    return moment.astimezone(UTC).isoformat(timespec="seconds") if moment else None
