"""`KubernetesBackend` (`kubernetes`): each rollout in its own Pod, through the official `kubernetes` client.

One Pod per rollout attempt (`restartPolicy: Never`, so a crash is reported, never retried behind the
trainer's back): the harness image for the rollout's harness, the command of the `RolloutProgram`, the
proxy URL and signed key in its environment, CPU / memory requests = limits (default 2 CPU / 2 Gi, the
paper's pods), `activeDeadlineSeconds` (the cluster enforces the deadline even if the trainer dies), no
service-account token, no privilege escalation, all capabilities dropped, and labels `rollout`,
`attempt`, `group`, `harness` under `forge-eval.io/`. Pod creations are capped per minute; finished pods
are deleted at `stop()` and, if a trainer died before that, by the TTL sweep of the next backend.

Status comes from one shared poll (a list call per interval for all rollouts, not one read per pod and
not a watch: watches need reconnect logic and the emulator the tests use sends no updates) and maps as
`pod_outcome()` says. The pod can report its answer, and its verifier's grade, with a last log line
`FORGE_VERDICT {"reward": ..., "verifier_output": ..., "answer": ...}`. The log is the harness's own
output, so a grade in it is one the agent can print: it is taken only from images whose verifier the
harness cannot reach (`trust_pod_verdict=True`); by default the rollout is left ungraded.

Tested against the kmock emulator only (CRUD, labels, status transitions); see README "Rollout backends".
"""

import asyncio
import collections
import json
import logging
import re
import time
import uuid
from collections.abc import Mapping
from dataclasses import InitVar, dataclass, field
from pathlib import Path
from typing import Any

from forge_eval._errors import ForgeError, UsageError
from forge_eval.sandbox import RolloutOutcome, RolloutProgram, RolloutSpec, RolloutStatus, proxy_env
from forge_eval.training.backends._backend import RolloutBackend, RolloutHandle
from forge_eval.training.rollouts import default_program, resolve

logger = logging.getLogger(__name__)

LABEL = "forge-eval.io"
MANAGED = {"app.kubernetes.io/managed-by": "forge-eval"}
VERDICT_PREFIX = "FORGE_VERDICT "
AGENT_UID = 1000  # the unprivileged `agent` user of every harness image
WORKDIR = Path("/work")
# container waiting reasons that will not resolve by waiting longer (the pod would sit until its deadline)
_STUCK = {"InvalidImageName", "ErrImageNeverPull", "CreateContainerConfigError", "CreateContainerError"}
_UNSAFE = re.compile(r"[^a-z0-9-]+")
_LABEL_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def _label_value(text: str) -> str:
    """A valid label value (<= 63 chars of [A-Za-z0-9_.-], alphanumeric at both ends)."""
    return _LABEL_UNSAFE.sub("-", text)[:63].strip("-_.") or "none"


def pod_name(spec: RolloutSpec) -> str:
    """A DNS-1123 name unique per start: forge-<rollout stem>-<attempt>-<random>."""
    stem = _UNSAFE.sub("-", spec.rollout_id.lower()).strip("-")[:40] or "rollout"
    return f"forge-{stem}-{spec.attempt}-{uuid.uuid4().hex[:6]}"


def _get(obj: Any, *path: str) -> Any:
    """Attribute path on the client's models (snake_case), None when any step is missing."""
    for step in path:
        obj = getattr(obj, step, None)
        if obj is None:
            return None
    return obj


def pod_outcome(pod: Any) -> RolloutOutcome | None:
    """How a pod's rollout ended, or None while it still runs.

    Succeeded -> completed; Failed with reason DeadlineExceeded -> timeout, Evicted -> evicted, a container
    terminated OOMKilled -> oom, else harness_crash with the container's exit code; a container stuck in an
    unrecoverable waiting state (bad image name, bad config) -> aborted.
    """
    phase = _get(pod, "status", "phase")
    reason = _get(pod, "status", "reason")
    statuses = _get(pod, "status", "container_statuses") or []
    terminated = next((s.state.terminated for s in statuses if _get(s, "state", "terminated")), None)
    exit_code = terminated.exit_code if terminated is not None else None
    if phase == "Succeeded":
        return RolloutOutcome("completed", exit_code if exit_code is not None else 0)
    if phase == "Failed":
        status: RolloutStatus
        if reason == "DeadlineExceeded":
            status = "timeout"
        elif reason == "Evicted":
            status = "evicted"
        elif terminated is not None and terminated.reason == "OOMKilled":
            status = "oom"
        else:
            status = "harness_crash"
        return RolloutOutcome(status, exit_code)
    for s in statuses:
        if _get(s, "state", "waiting", "reason") in _STUCK:
            return RolloutOutcome("aborted")
    return None


def verdict_from_logs(logs: str) -> dict[str, Any]:
    """The reward fields of the pod's last FORGE_VERDICT line, or {}."""
    for line in reversed(logs.splitlines()):
        if line.startswith(VERDICT_PREFIX):
            try:
                verdict = json.loads(line[len(VERDICT_PREFIX) :])
            except ValueError:
                return {}
            keys = ("reward", "verifier_output", "answer")
            return {k: verdict[k] for k in keys if k in verdict} if isinstance(verdict, dict) else {}
    return {}


class CreationBudget:
    """At most `per_minute` pod creations in any 60 s window (protects the API server and the scheduler
    from a trainer starting a whole batch at once). A sliding window over creation times; small enough
    that a rate-limiting dependency would not pay for itself."""

    def __init__(self, per_minute: int, window_s: float = 60.0) -> None:
        self.per_minute = per_minute
        self.window_s = window_s
        self._times: collections.deque[float] = collections.deque()
        self._lock = asyncio.Lock()

    async def take(self) -> None:
        async with self._lock:
            while True:
                now = time.monotonic()
                while self._times and now - self._times[0] >= self.window_s:
                    self._times.popleft()
                if len(self._times) < self.per_minute:
                    self._times.append(now)
                    return
                await asyncio.sleep(self.window_s - (now - self._times[0]))


@dataclass
class _Pod:
    name: str
    released: bool = False
    deleted: bool = False


def _client(api_client: Any, kubeconfig: str | None, context: str | None) -> Any:
    try:
        # optional dependency (the `k8s` extra): imported where the backend uses it
        from kubernetes import client, config
    except ImportError:
        raise ForgeError(
            "the kubernetes rollout backend needs the `kubernetes` Python client",
            hint="pip install 'forge-eval[k8s]'",
        ) from None
    if api_client is not None:
        return client.CoreV1Api(api_client)
    try:
        config.load_incluster_config()
    except config.ConfigException:
        try:
            config.load_kube_config(config_file=kubeconfig, context=context)
        except (config.ConfigException, OSError) as e:
            raise ForgeError(
                f"no Kubernetes cluster configuration found: {e}",
                hint="run inside the cluster, or point KUBECONFIG / kubeconfig= at one",
            ) from None
    return client.CoreV1Api()


@dataclass(kw_only=True, eq=False)
class KubernetesBackend(RolloutBackend):
    """Rollouts as Kubernetes Pods.

    Args:
        namespace: Where the pods go (must exist; see training/deploy/k8s/namespace.yaml).
        images: Harness name -> image; `image` is used for harnesses not listed.
        image: Default image (default `forge-eval/<harness>:latest`, built from training/deploy/).
        program: Builds each rollout's command (`default_program`: the task's `command` or the
            harness's `rollout_command`, called with the pod's work directory /work).
        cpu, memory: Requests = limits per pod (Kubernetes quantities).
        max_concurrent: Pods running at once; `start()` waits for a free slot.
        creations_per_minute: Cap on pod creations.
        ttl_s: Finished or abandoned pods of forge-eval older than this are deleted by the sweep.
        poll_s: Status poll interval.
        deadline_grace_s: Extra seconds of `activeDeadlineSeconds` past the rollout's deadline, so the
            trainer's own timeout (which reads the logs first) normally fires first.
        api_client: A configured `kubernetes.client.ApiClient` (default: in-cluster, else kubeconfig).
        kubeconfig, context: Which kubeconfig file and context to load.
        service_account: Pod service account; its token is never mounted.
        image_pull_policy: Kubernetes imagePullPolicy.
        trust_pod_verdict: Take `reward` and `verifier_output` from the pod's `FORGE_VERDICT` line. Only
            for an image whose verifier runs where the harness cannot reach it (another container or uid,
            its own log): in one process tree with the harness, the agent can print any reward.
    """

    name = "kubernetes"
    description = "one Kubernetes Pod per rollout (official client; requests/limits, activeDeadlineSeconds)"

    namespace: str = "forge-rollouts"
    images: Mapping[str, str] = field(default_factory=dict)
    image: str | None = None
    program: RolloutProgram = default_program
    cpu: str = "2"
    memory: str = "2Gi"
    max_concurrent: int = 64
    creations_per_minute: InitVar[int] = 120
    ttl_s: float = 3600.0
    poll_s: float = 2.0
    deadline_grace_s: float = 30.0
    api_client: InitVar[Any] = None
    kubeconfig: InitVar[str | None] = None
    context: InitVar[str | None] = None
    service_account: str | None = None
    image_pull_policy: str = "IfNotPresent"
    trust_pod_verdict: bool = False

    def __post_init__(
        self, creations_per_minute: int, api_client: Any, kubeconfig: str | None, context: str | None
    ) -> None:
        if self.max_concurrent < 1 or creations_per_minute < 1:
            raise UsageError(
                f"max_concurrent and creations_per_minute must be at least 1, got {self.max_concurrent} and "
                f"{creations_per_minute}"
            )
        self.api = _client(api_client, kubeconfig, context)
        self.budget = CreationBudget(creations_per_minute)
        self.instance = uuid.uuid4().hex[:12]  # labels this backend's pods for its shared poll
        self._slots: asyncio.Semaphore | None = None
        self._pods: dict[str, Any] = {}  # name -> latest V1Pod seen by the poll
        self._waiting = 0
        self._refreshed: asyncio.Condition | None = None
        self._poller: asyncio.Task[None] | None = None
        self._last_sweep = 0.0

    def image_for(self, harness: str) -> str:
        return self.images.get(harness) or self.image or f"forge-eval/{harness}:latest"

    def pod_manifest(self, spec: RolloutSpec, name: str, argv: list[str], env: Mapping[str, str]) -> Any:
        """The V1Pod of one rollout attempt."""
        # optional dependency (the `k8s` extra): imported where the backend uses it
        from kubernetes import client

        group = spec.group or str(spec.task.get("task_id") or spec.rollout_id)
        labels = {
            **MANAGED,
            f"{LABEL}/rollout": _label_value(spec.rollout_id),
            f"{LABEL}/attempt": str(spec.attempt),
            f"{LABEL}/group": _label_value(group),
            f"{LABEL}/harness": _label_value(spec.harness),
            f"{LABEL}/backend": self.instance,
        }
        resources = {"cpu": self.cpu, "memory": self.memory}
        container = client.V1Container(
            name="harness",
            image=self.image_for(spec.harness),
            image_pull_policy=self.image_pull_policy,
            command=list(argv),
            env=[client.V1EnvVar(name=k, value=v) for k, v in env.items()],
            working_dir=str(WORKDIR),
            resources=client.V1ResourceRequirements(requests=resources, limits=resources),
            # The images' `agent` user (training/deploy/docker): the kubelet refuses to start the
            # container as root even if an image forgets its USER line.
            security_context=client.V1SecurityContext(
                allow_privilege_escalation=False,
                capabilities=client.V1Capabilities(drop=["ALL"]),
                read_only_root_filesystem=True,
                run_as_non_root=True,
                run_as_user=AGENT_UID,
                run_as_group=AGENT_UID,
                seccomp_profile=client.V1SeccompProfile(type="RuntimeDefault"),
            ),
            volume_mounts=[
                client.V1VolumeMount(name="work", mount_path=str(WORKDIR)),
                client.V1VolumeMount(name="tmp", mount_path="/tmp"),
            ],
        )
        return client.V1Pod(
            metadata=client.V1ObjectMeta(
                name=name,
                namespace=self.namespace,
                labels=labels,
                annotations={
                    f"{LABEL}/rollout-id": spec.rollout_id,
                    f"{LABEL}/task": json.dumps(spec.task, default=str)[:4096],
                },
            ),
            spec=client.V1PodSpec(
                containers=[container],
                restart_policy="Never",
                active_deadline_seconds=max(1, int(spec.deadline_s + self.deadline_grace_s)),
                automount_service_account_token=False,
                enable_service_links=False,
                service_account_name=self.service_account,
                security_context=client.V1PodSecurityContext(fs_group=AGENT_UID),
                termination_grace_period_seconds=5,
                volumes=[
                    client.V1Volume(name="work", empty_dir=client.V1EmptyDirVolumeSource()),
                    client.V1Volume(name="tmp", empty_dir=client.V1EmptyDirVolumeSource()),
                ],
            ),
        )

    def _slot(self) -> asyncio.Semaphore:
        if self._slots is None:
            self._slots = asyncio.Semaphore(self.max_concurrent)
        return self._slots

    async def _call(self, what: str, fn: Any, *args: Any, **kwargs: Any) -> Any:
        """One blocking client call off the event loop; API errors become messages."""
        # optional dependency (the `k8s` extra): imported where the backend uses it
        from kubernetes.client.exceptions import ApiException

        try:
            return await asyncio.to_thread(fn, *args, **kwargs)
        except ApiException as e:
            raise ForgeError(
                f"the Kubernetes API refused to {what} (HTTP {e.status}): {e.reason}",
                hint=f"check the namespace {self.namespace!r} exists and the trainer's RBAC allows pods",
            ) from None

    async def start(self, spec: RolloutSpec) -> RolloutHandle:
        await self._slot().acquire()
        try:
            await self._sweep()
            command = await resolve(self.program, spec, WORKDIR)
            if command.forwards:  # a harness's task tools are served on this host (`harness_rollout`)
                if command.cleanup is not None:
                    await command.cleanup()
                raise ForgeError(
                    f"rollout {spec.rollout_id}: harness {spec.harness!r} needs ports of this host forwarded "
                    f"in ({', '.join(map(str, command.forwards))}: the task's tool server), which a pod "
                    "cannot reach",
                    hint="run harness rollouts of benchmark tasks on the local backend, or give the task "
                    "a `command` its image runs",
                )
            env = {**spec.env, **proxy_env(spec), **command.env}
            name = pod_name(spec)
            await self.budget.take()
            manifest = self.pod_manifest(spec, name, list(command.argv), env)
            await self._call(f"create pod {name}", self.api.create_namespaced_pod, self.namespace, manifest)
        except BaseException:
            self._slot().release()
            raise
        return RolloutHandle(spec.rollout_id, spec.attempt, _Pod(name))

    async def _poll(self) -> None:
        assert self._refreshed is not None
        while self._waiting:
            try:
                listed = await self._call(
                    "list pods",
                    self.api.list_namespaced_pod,
                    self.namespace,
                    label_selector=f"{LABEL}/backend={self.instance}",
                )
                # filter here as well: a selector the server ignores must not mix in other pods
                self._pods = {
                    p.metadata.name: p
                    for p in listed.items
                    if (p.metadata.labels or {}).get(f"{LABEL}/backend") == self.instance
                }
            except ForgeError as e:
                logger.warning("%s (will retry)", e)
            async with self._refreshed:
                self._refreshed.notify_all()
            await asyncio.sleep(self.poll_s)
        self._poller = None

    async def _next_snapshot(self) -> None:
        if self._refreshed is None:
            self._refreshed = asyncio.Condition()
        if self._poller is None:
            self._poller = asyncio.create_task(self._poll())
        async with self._refreshed:
            await self._refreshed.wait()

    async def wait(self, handle: RolloutHandle, deadline: float) -> RolloutOutcome:
        pod: _Pod = handle.ref
        self._waiting += 1
        try:
            seen = False
            while True:
                remaining = deadline - time.time()
                if remaining <= 0:
                    await self._delete(pod)
                    return RolloutOutcome("timeout")
                try:
                    await asyncio.wait_for(self._next_snapshot(), remaining)
                except TimeoutError:
                    continue
                current = self._pods.get(pod.name)
                if current is None:
                    if seen:  # gone without a final status: drained node, external delete
                        return RolloutOutcome("evicted")
                    continue
                seen = True
                outcome = pod_outcome(current)
                if outcome is not None:
                    verdict = self._verdict(handle, await self.logs(handle))
                    return RolloutOutcome(outcome.status, outcome.exit_code, **verdict)
        finally:
            self._waiting -= 1

    def _verdict(self, handle: RolloutHandle, logs: str) -> dict[str, Any]:
        """The pod's verdict: its answer, and its grade only from an image trusted to grade."""
        verdict = verdict_from_logs(logs)
        if self.trust_pod_verdict or verdict.keys() <= {"answer"}:
            return verdict
        logger.warning(
            "rollout %s: ignored the grade its pod printed (the log is the harness's own output); the "
            "rollout is ungraded. Pass trust_pod_verdict=True only for an image whose verifier the harness "
            "cannot reach",
            handle.rollout_id,
        )
        return {k: v for k, v in verdict.items() if k == "answer"}

    async def logs(self, handle: RolloutHandle) -> str:
        pod: _Pod = handle.ref
        try:
            text = await self._call(
                f"read the log of pod {pod.name}",
                self.api.read_namespaced_pod_log,
                pod.name,
                self.namespace,
                tail_lines=2000,
            )
        except ForgeError as e:
            return f"(no logs: {e.message})"
        return text if isinstance(text, str) else str(text)

    async def _delete(self, pod: _Pod) -> None:
        if pod.deleted:
            return
        # optional dependency (the `k8s` extra): imported where the backend uses it
        from kubernetes.client.exceptions import ApiException

        try:
            await asyncio.to_thread(
                self.api.delete_namespaced_pod, pod.name, self.namespace, grace_period_seconds=0
            )
        except ApiException as e:
            if e.status != 404:
                logger.warning("could not delete pod %s: HTTP %s %s", pod.name, e.status, e.reason)
                return
        pod.deleted = True

    async def stop(self, handle: RolloutHandle) -> None:
        pod: _Pod = handle.ref
        await self._delete(pod)
        if not pod.released:
            pod.released = True
            self._slot().release()

    async def _sweep(self) -> None:
        """Delete forge-eval pods (of any backend instance) created more than ttl_s ago: the leftovers of
        trainers that died before `stop()` (ttl_s exceeds every deadline). At most once a minute."""
        now = time.time()
        if now - self._last_sweep < 60:
            return
        self._last_sweep = now
        key, value = next(iter(MANAGED.items()))
        try:
            listed = await self._call(
                "list pods", self.api.list_namespaced_pod, self.namespace, label_selector=f"{key}={value}"
            )
        except ForgeError as e:
            logger.warning("TTL sweep skipped: %s", e)
            return
        for p in listed.items:
            if (p.metadata.labels or {}).get(key) != value:
                continue
            created = p.metadata.creation_timestamp
            if created is not None and now - created.timestamp() > self.ttl_s:
                await self._delete(_Pod(p.metadata.name))
