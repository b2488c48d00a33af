"""`ForgeProxyAgentLoop`: the veRL AgentLoop that runs a harness through the recording proxy.

Registered with veRL through `actor_rollout_ref.rollout.agent.agent_loop_config_path` (see
training/configs/agent_loops.yaml); the dataset rows pick it with `agent_name: forge_proxy_agent`. Per
rollout, `run()` creates the rollout on the proxy, starts the harness through a rollout backend, waits,
reports the outcome and the verifier's reward to the proxy, reads back the call records, applies the
failure policy and the partial-rollout policy (`partial`), and returns one `AgentLoopOutput` per
trainable row, or `[]` for a discarded rollout (V1 writes nothing for an empty list). `carry` cannot
resume a rollout here (veRL draws each step's prompts afresh and no harness run here records a state to
resume from), so under veRL it discards, and says so. Each rollout's token fidelity is logged, and a
step's per-harness table once the next step's rollouts arrive (`forge_eval.training.fidelity`); a rollout
with calls lacking the engine's token ids returns nothing. Importing this module needs veRL.
"""

import json
import logging
import os
import re
import time
import uuid
from collections import Counter
from typing import Any

from verl.experimental.agent_loop.agent_loop import AgentLoopBase, AgentLoopMetrics, AgentLoopOutput

from forge_eval._errors import UsageError
from forge_eval.proxy import HttpProxyControl, ProxyControl
from forge_eval.sandbox import RolloutOutcome, RolloutSpec
from forge_eval.training.backends import ROLLOUT_BACKENDS, RolloutBackend
from forge_eval.training.credit import credit_variant
from forge_eval.training.failures import discard_reason
from forge_eval.training.fidelity import StepFidelity, rollout_fidelity, summary
from forge_eval.training.partial import partial_policy
from forge_eval.training.trajectories import Trajectory, build_trajectory
from forge_eval.training.verl._outputs import check_verl_credit, output_fields

logger = logging.getLogger(__name__)

# veRL makes one loop object per rollout; the worker process keeps the token fidelity of the current step.
STEP_FIDELITY = StepFidelity()

_UNSAFE = re.compile(r"[^A-Za-z0-9_:\-]")
SAMPLING_KEYS = (
    "temperature",
    "top_p",
    "top_k",
    "min_p",
    "repetition_penalty",
    "presence_penalty",
    "frequency_penalty",
    "max_tokens",
)


def _task(kwargs: dict[str, Any]) -> dict[str, Any]:
    extra = kwargs.get("extra_info") or {}
    raw = extra.get("forge_task")
    if raw is None:
        raise UsageError(
            "the dataset row has no extra_info.forge_task",
            hint="export the training set with forge_eval.training.verl.task_rows / export_parquet",
        )
    return json.loads(raw) if isinstance(raw, str) else dict(raw)


class ForgeProxyAgentLoop(AgentLoopBase):
    """Runs one harness rollout per call of `run()` and turns its recorded calls into training outputs.

    Args (beyond veRL's; set them in the agent-loop YAML entry):
        proxy_url: The proxy's data plane, the harnesses' base URL (e.g. http://127.0.0.1:8377).
        control_url: The proxy's control plane (e.g. http://127.0.0.1:8378 or unix:/path/control.sock),
            a listener of its own that harnesses cannot reach.
        admin_key_env: Environment variable that holds the proxy's admin key.
        backend: A `ROLLOUT_BACKENDS` name, or a backend instance (tests).
        credit: `broadcast`, `masked` or `terminal` (gamma must be 1 under veRL V1).
        partial: A `PARTIAL_POLICIES` name for rollouts cut short: `discard` (default), `zero`, `mask`,
            `carry` (which discards here: nothing can resume a rollout under veRL).
        merge: One output per prefix-merged chain (True) or per call.
        deadline_s: Wall-clock budget per rollout (harness + verifier).
        proxy: A `ProxyControl` instance instead of `proxy_url` (tests).
    """

    def __init__(
        self,
        trainer_config: Any,
        server_manager: Any,
        tokenizer: Any,
        processor: Any,
        dataset_cls: Any,
        data_config: Any,
        hf_model_type: str | None = None,
        *,
        proxy_url: str | None = None,
        control_url: str | None = None,
        admin_key_env: str = "FORGE_PROXY_ADMIN_KEY",
        backend: str | RolloutBackend = "local",
        credit: str = "broadcast",
        partial: str = "discard",
        merge: bool = True,
        deadline_s: float = 1800.0,
        proxy: ProxyControl | None = None,
        **kwargs: Any,
    ) -> None:
        kwargs.pop("name", None)  # the YAML route passes the entry's name as well
        super().__init__(
            trainer_config,
            server_manager,
            tokenizer,
            processor,
            dataset_cls,
            data_config,
            hf_model_type,
            **kwargs,
        )
        self.credit = credit_variant(credit)
        check_verl_credit(self.credit)
        self.partial = partial_policy(partial)
        self.merge = merge
        self.deadline_s = deadline_s
        self.backend = ROLLOUT_BACKENDS.get(backend)() if isinstance(backend, str) else backend
        if not proxy_url:
            raise UsageError("the forge agent loop needs proxy_url", hint="set it in agent_loops.yaml")
        if proxy is None:
            if not control_url:
                raise UsageError(
                    "the forge agent loop needs control_url (the proxy's control plane listener)",
                    hint="set it in agent_loops.yaml, e.g. http://127.0.0.1:8378",
                )
            proxy = HttpProxyControl(control_url, os.environ.get(admin_key_env, ""))
            self._own_client: HttpProxyControl | None = proxy
        else:
            self._own_client = None
        self.proxy_url = proxy_url
        self.proxy = proxy
        self.discards: Counter[str] = Counter()
        self.partial_kept: Counter[str] = Counter()  # partial rollouts kept, by "action reason"

    async def _run_backend(self, spec: RolloutSpec, deadline: float) -> RolloutOutcome:
        """Run the harness; a backend failure ends the rollout as a crash, which the failure policy judges
        (an exception here would instead mark the whole task group failed in veRL V1)."""
        try:
            handle = await self.backend.start(spec)
        except Exception as e:
            logger.warning("rollout backend could not start %s: %s", spec.rollout_id, e)
            return RolloutOutcome(status="harness_crash")
        try:
            return await self.backend.wait(handle, deadline)
        except Exception as e:
            logger.warning("rollout backend failed while running %s: %s", spec.rollout_id, e)
            return RolloutOutcome(status="harness_crash")
        finally:
            await self.backend.stop(handle)

    async def run(self, sampling_params: dict[str, Any], **kwargs: Any) -> list[AgentLoopOutput]:
        # veRL instantiates the loop for every rollout, so the HTTP client it made lives for one run
        try:
            return await self._run(sampling_params, **kwargs)
        finally:
            if self._own_client is not None:
                await self._own_client.aclose()

    @staticmethod
    def _log_fidelity(rollout_id: str, trajectory: Trajectory) -> None:
        """Log the rollout's token fidelity, and the per-harness table of a step once the next one starts."""
        fidelity = rollout_fidelity(trajectory)
        level = logging.WARNING if fidelity.unverified_rollouts else logging.INFO
        logger.log(level, "forge rollout %s token fidelity: %s", rollout_id, summary(fidelity))
        ended = STEP_FIDELITY.add(max(trajectory.policy_versions, default=None), fidelity)
        if ended:
            logger.info("%s", ended)

    async def _run(self, sampling_params: dict[str, Any], **kwargs: Any) -> list[AgentLoopOutput]:
        task = _task(kwargs)
        started = time.time()
        stem = _UNSAFE.sub("-", str(task.get("task_id", "task")))[:100]  # the proxy's id alphabet
        rollout_id = f"{stem}-{uuid.uuid4().hex[:12]}"
        group_uid = str(kwargs.get("uid") or task.get("task_id"))
        created = await self.proxy.create_rollout(
            {
                "rollout_id": rollout_id,
                "attempt": 0,
                "group_uid": group_uid,
                "task_id": task.get("task_id"),
                "harness": task["harness"],
                "sampling": {k: sampling_params[k] for k in SAMPLING_KEYS if k in sampling_params},
                "deadline_s": self.deadline_s,
            }
        )
        spec = RolloutSpec(
            rollout_id=rollout_id,
            attempt=0,
            harness=task["harness"],
            task=task,
            proxy_base_url=self.proxy_url.rstrip("/") + created.base_path,
            api_key=created.api_key,
            deadline_s=self.deadline_s,
            group=group_uid,
        )
        outcome = await self._run_backend(spec, started + self.deadline_s)
        await self.proxy.report(rollout_id, 0, outcome)
        record, calls = await self.proxy.fetch(rollout_id, 0)
        await self.proxy.release(rollout_id)
        trajectory = build_trajectory(record, calls)
        self._log_fidelity(rollout_id, trajectory)
        reason = discard_reason(trajectory)
        admission = self.partial.admit(trajectory, reason)
        fields = (
            []
            if not admission.in_group
            else output_fields(
                trajectory,
                self.credit,
                merge=self.merge,
                reward=admission.reward,
                learns=admission.learns,
            )
        )
        if not fields:
            reason = reason or ("unverified_tokens" if trajectory.stats.unverified else "no_trainable_call")
            self.discards[reason] += 1
            logger.warning(
                "forge rollout %s discarded: %s (%d calls, partial policy %s)",
                rollout_id,
                reason,
                len(calls),
                self.partial.name,
            )
            return []
        if reason is not None:
            self.partial_kept[f"{admission.action} {reason}"] += 1
            logger.warning(
                "forge rollout %s cut short (%s): kept under partial policy %s (%d calls)",
                rollout_id,
                reason,
                self.partial.name,
                len(calls),
            )
        metrics = AgentLoopMetrics(generate_sequences=time.time() - started)
        return [AgentLoopOutput(metrics=metrics.model_copy(), **f) for f in fields]
