"""One training run of the credit ablation: one variant, one seed, through the real proxy.

Per step: draw the step's tasks (a pure function of seed and step), run `group_size` rollouts of each
through the recording proxy with the `plan-act` harness, read the records back over the control plane,
rebuild trajectories, tag roles, apply the credit variant and GRPO (`build_batch`), and take
`ppo_epochs` clipped policy-gradient steps on the rows (veRL's vanilla PPO loss, aggregated by
`loss_agg`). Every `eval_every` steps the policy is evaluated
greedily on the held-out tasks and the run is checkpointed (weights, optimizer, curves); a re-run resumes
from the last checkpoint and, because sampling seeds and data order are pure functions of (seed, step,
rollout), continues exactly.
"""

import asyncio
import contextlib
import gc
import math
import os
import secrets
import shutil
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import aiohttp
import numpy as np

from forge_eval._errors import ForgeError
from forge_eval._status import duration, status
from forge_eval.proxy import HttpProxyControl, ProxyConfig, create_app, create_control_app, serve_in_task
from forge_eval.rundir import write_json
from forge_eval.training import build_batch, build_trajectory, credit_variant
from forge_eval.training.ablation import _slots
from forge_eval.training.ablation._harness import (
    HARNESS,
    RESUMABLE_AFTER,
    Cut,
    PlanActState,
    draw_cut,
    run_plan_act,
)
from forge_eval.training.ablation._loss import DEFAULT_LOSS_AGG, agg_loss, pg_losses
from forge_eval.training.ablation._policies import POLICIES
from forge_eval.training.ablation._upstream import PolicyUpstream
from forge_eval.training.batch import TrainingRow
from forge_eval.training.credit import TASK_ROLES
from forge_eval.training.partial import partial_policy
from forge_eval.training.trajectories import Trajectory, TrajectoryCall

_TINY = POLICIES.get("tiny")  # a bare RunConfig trains the default policy with its own settings
RUN_FILE = "run.json"
CHECKPOINT = "checkpoint.pt"


@dataclass(frozen=True)
class RunConfig:
    """Settings of one run (every variant of an ablation gets the same, except `variant`)."""

    variant: str
    seed: int
    policy: str = "tiny"
    # few large steps: 16 tasks x 8 rollouts a step learn in 15-25 steps what 8 x 4 did not in 100
    steps: int = 25
    tasks_per_step: int = 16
    group_size: int = 8
    lr: float = _TINY.lr
    ppo_epochs: int = _TINY.ppo_epochs
    clip: float = 0.2
    grad_clip: float = 1.0  # max global gradient norm per update (veRL's actor.grad_clip)
    entropy_coeff: float = _TINY.entropy_coeff  # bonus on the trained tokens (veRL's actor.entropy_coeff)
    min_lr_ratio: float = _TINY.min_lr_ratio  # lr decays to this fraction (veRL's optim.min_lr_ratio)
    loss_agg: str = DEFAULT_LOSS_AGG  # veRL's actor.loss_agg_mode
    eval_every: int = 5
    n_heldout: int = 14
    split_seed: int = 0
    d_model: int = 128
    n_layers: int = 2
    gamma: float = 1.0
    keep_records: bool = False
    sampling_batch: int = 0  # calls decoded together at most (0: every waiting call of the step)
    partial: str = "discard"  # the partial-rollout policy (`forge_eval.training.partial`)
    failure_rate: float = 0.0  # share of training rollouts cut by an injected timeout or crash
    failure_points: tuple[int, ...] = (1, 2, 3)  # the calls a cut rollout made before its cut (drawn)


def cosine_lr(lr: float, step: int, steps: int, min_lr_ratio: float) -> float:
    """The learning rate of `step` (0-based) of `steps`: veRL's cosine schedule without warm-up
    (`lr_scheduler_type: cosine`, `get_cosine_schedule_with_warmup`), from `lr` down towards
    `lr * min_lr_ratio`; a ratio of 1 is a constant rate."""
    cosine = math.cos(math.pi * step / max(1, steps))
    return lr * (min_lr_ratio + (1 - min_lr_ratio) * 0.5 * (1 + cosine))


def _import_torch() -> Any:
    try:
        import torch  # optional: installed by scripts/setup.d/40-verl.sh
    except ImportError:
        raise ForgeError(
            "the credit ablation trains a policy with PyTorch, which is not installed",
            hint="run scripts/setup.d/40-verl.sh (it installs the CPU build of torch), or "
            "pip install torch --index-url https://download.pytorch.org/whl/cpu",
        ) from None
    return torch


class _Proxy:
    """The recording proxy serving the policy: the data plane (the harness's base URL) on a listener in
    the run's event loop, the control plane reached in-process (no listener; admin key) from that loop."""

    def __init__(self, records: Path, upstream: PolicyUpstream) -> None:
        self.upstream = upstream
        self.config = ProxyConfig(records_dir=records, secret=secrets.token_hex(16))
        self.app = create_app(self.config, upstream)
        self.control = HttpProxyControl.in_process(create_control_app(self.app), str(self.config.admin_key))
        self.url = ""


@dataclass(frozen=True)
class _Job:
    """One rollout to run: its id, task, GRPO group and sampling; an injected `cut`; the harness `state`
    to resume it from (or to hold the state at its cut)."""

    rollout_id: str
    task: _slots.SlotTask
    group: str
    sampling: dict[str, Any]
    cut: Cut | None = None
    state: PlanActState | None = None


async def _rollout(proxy: _Proxy, client: aiohttp.ClientSession, job: _Job, mode: str) -> Trajectory:
    task = job.task
    fields = {
        "rollout_id": job.rollout_id,
        "group_uid": job.group,
        "task_id": task.task_id,
        "harness": HARNESS,
    }
    created = await proxy.control.create_rollout(fields | {"mode": mode, "sampling": job.sampling})
    outcome = await run_plan_act(
        client, proxy.url + created.base_path, created.api_key, task, state=job.state, cut=job.cut
    )
    await proxy.control.report(job.rollout_id, 0, outcome)
    record, calls = await proxy.control.fetch(job.rollout_id, 0)
    await proxy.control.release(job.rollout_id)
    return build_trajectory(record, calls)


async def _rollouts(proxy: _Proxy, jobs: list[_Job], mode: str) -> list[Trajectory]:
    """Run `jobs` all at once: the upstream decodes their calls in batches once every rollout is waiting
    on one, so none may wait for a connection (no pool limit)."""
    upstream = proxy.upstream
    upstream.open_sessions(len(jobs))

    async def one(client: aiohttp.ClientSession, job: _Job) -> Trajectory:
        try:
            return await _rollout(proxy, client, job, mode)
        finally:
            upstream.close_session()

    # the harness's own HTTP client: aiohttp, as the proxy's upstream client (half httpx's CPU per call)
    connector = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(connector=connector, timeout=aiohttp.ClientTimeout(total=120)) as client:
        return await asyncio.gather(*(one(client, job) for job in jobs))


def _scratch_records() -> Path:
    """Where the proxy writes the records a run does not keep (each step's are removed once its batch is
    built): memory-backed /dev/shm where there is one. The proxy's writer makes, replaces and removes a
    few files per rollout: on this machine's disk a masked step of 128 rollouts took 3.5 s against 2.5 s
    with the records in /dev/shm."""
    shm = Path("/dev/shm")
    where = shm if shm.is_dir() and os.access(shm, os.W_OK) else None
    return Path(tempfile.mkdtemp(prefix="forge-ablation-records-", dir=where))


GC_YOUNG_THRESHOLD = 100_000  # allocations between young collections while a run trains (Python's: 700)


@contextlib.contextmanager
def collector_tuned() -> Iterator[None]:
    """The cyclic garbage collector set for a training run, restored after: the objects alive at the start
    (torch, the proxy, the policy: about 530,000) are frozen out of every collection, and young
    collections come every `GC_YOUNG_THRESHOLD` allocations instead of 700 (older generations follow
    Python's ratios, so cycles are still freed and memory stays bounded). A step allocates and drops
    hundreds of thousands of objects (requests, records, trajectories): with Python's settings the
    collector ran about 160 times a step and walked the whole heap every other step, 11% of a run's CPU
    (`bench/ablation_step.py`). Collection changes no number: the weights come out bit-identical."""
    thresholds = gc.get_threshold()
    gc.collect()
    gc.freeze()
    gc.set_threshold(GC_YOUNG_THRESHOLD, *thresholds[1:])
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)
        gc.unfreeze()


def _success(t: Trajectory) -> float:
    return float(bool((t.rollout.verifier_output or {}).get("success")))


def _internal_entropy(trajectories: list[Trajectory]) -> float | None:
    """Mean surprisal (-logprob) of the tokens sampled in harness-internal calls: a one-sample entropy
    estimate of what the policy says in its planner and subagent calls. Uniform filler is log(12) = 2.48."""
    values = [
        -float(lp) for t in trajectories for c in t.calls if c.role not in TASK_ROLES for lp in c.logprobs
    ]
    return float(np.mean(values)) if values else None


def _segments(row: TrainingRow, calls: dict[str, TrajectoryCall]) -> list[tuple[int, int]]:
    """The trained calls of a (prefix-merged) row as (start, length) in its response: call k's response
    starts where its prompt, which extends the row's first prompt, ends."""
    spans = []
    for call_id in row.call_ids:
        call = calls[call_id]
        start = len(call.prompt_ids) - len(row.prompt_ids)
        if row.response_mask[start]:
            spans.append((start, len(call.response_ids)))
    return spans


class Run:
    """A training run with its proxy, policy and optimizer; `execute()` trains and evaluates."""

    def __init__(self, config: RunConfig, out: Path, *, tune_collector: bool = True) -> None:
        self.torch = _import_torch()
        # deferred: _model imports torch, an optional dependency (scripts/setup.d/40-verl.sh)
        from forge_eval.training.ablation._model import weights_hash

        self.config, self.out = config, out
        self.train_tasks, self.heldout = _slots.split_tasks(config.n_heldout, config.split_seed)
        self.credit = credit_variant(config.variant, gamma=config.gamma)
        self.carries = partial_policy(config.partial).resumes  # keep the harness state at each cut
        self.torch.set_num_threads(1)  # one core per run; runs go in parallel (and bitwise repeatable)
        self.torch.manual_seed(config.seed)
        self.model = POLICIES.get(config.policy).build(config)
        self.init_hash = weights_hash(self.model)
        self.optimizer = self.torch.optim.Adam(self.model.parameters(), lr=config.lr)
        self.upstream = PolicyUpstream(
            self.model, f"forge-{config.policy}-policy", max_batch=config.sampling_batch
        )
        self.state: dict[str, Any] = {"step": 0, "train": [], "eval": [], "seconds": 0.0}
        self.records = out / "records"  # the proxy's records dir: a scratch dir unless kept (`execute`)
        self.tune_collector = tune_collector  # `collector_tuned` while training (off: Python's settings)

    async def _train(self) -> None:
        c = self.config
        proxy = _Proxy(self.records, self.upstream)
        async with serve_in_task(proxy.app) as url:
            proxy.url = url
            try:
                if not self.state["eval"]:
                    self.state["eval"].append(await self._evaluate(proxy, 0))
                    self._save()
                    self._report()
                while self.state["step"] < c.steps:
                    started = time.perf_counter()
                    step = self.state["step"]
                    self.state["train"].append(await self._train_step(proxy, step))
                    self.state["step"] = step + 1
                    self.state["seconds"] += time.perf_counter() - started
                    if self.state["step"] % c.eval_every == 0 or self.state["step"] == c.steps:
                        self.state["eval"].append(await self._evaluate(proxy, self.state["step"]))
                        self._save()
                        self._report()
            finally:
                await proxy.control.aclose()

    def _report(self) -> None:
        """One stderr line per held-out evaluation, so a long run in a worker process shows progress."""
        c, done = self.config, self.state["step"]
        per_step = self.state["seconds"] / done if done else None
        pace = f", {per_step:.2f} s/step, ETA {duration((c.steps - done) * per_step)}" if per_step else ""
        status(
            f"{c.variant} seed {c.seed} ({c.loss_agg}): step {done}/{c.steps}, "
            f"held-out success {self.state['eval'][-1]['success']:.0%}{pace}"
        )

    def _load(self) -> None:
        path = self.out / CHECKPOINT
        if path.exists():
            saved = self.torch.load(path, weights_only=False)
            if saved["config"] != asdict(self.config):
                raise ValueError(
                    f"{path} was written by another configuration; remove {self.out} to start over"
                )
            self.model.load_state_dict(saved["model"])
            self.optimizer.load_state_dict(saved["optimizer"])
            self.state = saved["state"]

    def _save(self) -> None:
        tmp = self.out / (CHECKPOINT + ".tmp")
        blob = {
            "config": asdict(self.config),
            "model": self.model.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "state": self.state,
        }
        self.torch.save(blob, tmp)
        os.replace(tmp, self.out / CHECKPOINT)

    async def _evaluate(self, proxy: _Proxy, step: int) -> dict[str, Any]:
        self.model.eval()
        jobs = [
            _Job(f"eval{step}-{i}", task, f"eval{step}-{task.task_id}", {"temperature": 0.0, "seed": 0})
            for i, task in enumerate(self.heldout)
        ]
        trajectories = await _rollouts(proxy, jobs, "eval")
        self._drop_records(jobs)
        per_task = {t.rollout.task_id: _success(t) for t in trajectories}
        return {
            "step": step,
            "success": float(np.mean(list(per_task.values()))),
            "reward": float(np.mean([t.rollout.reward for t in trajectories])),
            "per_task": per_task,
        }

    def _drop_records(self, jobs: list[_Job]) -> None:
        if not self.config.keep_records:
            for job in jobs:
                shutil.rmtree(self.records / job.rollout_id, ignore_errors=True)

    async def _train_step(self, proxy: _Proxy, step: int) -> dict[str, Any]:
        c = self.config
        self.upstream.policy_version = step
        for group in self.optimizer.param_groups:  # a pure function of the step, so a resumed run agrees
            group["lr"] = cosine_lr(c.lr, step, c.steps, c.min_lr_ratio)
        tasks = _slots.data_order(self.train_tasks, c.seed, step, c.tasks_per_step)
        sampling = {"temperature": 1.0, "seed": c.seed}
        jobs = []
        for i, task in enumerate(tasks):
            for j in range(c.group_size):
                cut = draw_cut(c.failure_rate, c.failure_points, c.seed, step, i * c.group_size + j)
                # a cut rollout's state is kept where `carry` may resume it
                state = PlanActState.start(task) if cut and self.carries else None
                jobs.append(_Job(f"s{step}-t{i}-g{j}", task, f"s{step}-{task.task_id}", sampling, cut, state))
        carry = self.state.get("carry") or {"resume": {}, "held": []}
        resumed = [  # last step's carried rollouts, resumed from their state (and not cut again)
            _Job(f"s{step}-resumed-{rid}", state.task, group, sampling, state=state)
            for rid, (group, state) in carry["resume"].items()
        ]
        trajectories = await _rollouts(proxy, jobs + resumed, "train")
        self._drop_records(jobs + resumed)
        at_cut = {j.rollout_id: j for j in jobs if j.state is not None and j.state.calls in RESUMABLE_AFTER}
        policy = partial_policy(c.partial, resumable=lambda t: t.rollout.rollout_id in at_cut)
        # prefix-merged rows, as veRL's agent loop hands them over: a chain of calls is one sequence, so
        # its shared prompt is computed once (and the seq-mean loss modes weigh chains, as veRL does)
        batch = build_batch([*trajectories, *carry["held"]], credit=self.credit, merge=True, partial=policy)
        self.state["carry"] = {
            "resume": {
                t.rollout.rollout_id: (str(t.rollout.group_uid), at_cut[t.rollout.rollout_id].state)
                for t in batch.carried
            },
            "held": batch.held,
        }
        roles: Counter[str] = Counter()
        for row in batch.rows:
            roles[row.roles[0]] += int(row.response_mask.sum())
        finished = [t.rollout.reward for t in trajectories if t.rollout.reward is not None]
        metrics: dict[str, Any] = {
            "step": step,
            "lr": self.optimizer.param_groups[0]["lr"],
            "reward": float(np.mean(finished)) if finished else None,
            "success": float(np.mean([_success(t) for t in trajectories])),
            "internal_entropy": _internal_entropy(trajectories),
            "trainable_tokens": dict(roles),
            "rows": batch.stats.rows,
            "discarded": batch.stats.discards.discarded,
        }
        if c.failure_rate > 0:
            p = batch.stats.partial
            metrics["partial"] = {
                "cut": sum(j.cut is not None for j in jobs),
                "actions": dict(p.actions),
                "resumed": len(resumed),
                "held": p.held,
                "groups_short": p.groups_short,
                "members_lost": p.members_lost,
                "groups_dropped": batch.stats.groups_dropped,
            }
        # every row of the step, as veRL's actor gets them: a group whose rewards are all equal has zero
        # advantage, yet its tokens count in the aggregation (and take the entropy bonus), so updates
        # shrink as groups converge; updating on the other rows alone kept them full-sized to the end, and
        # runs that had solved every held-out task drifted off it again
        if batch.rows:
            calls = {c.call_id: c for t in [*trajectories, *carry["held"]] for c in t.calls}
            metrics |= self._update(batch.rows, [_segments(r, calls) for r in batch.rows])
        return metrics

    def _update(self, rows: list[TrainingRow], segments: list[list[tuple[int, int]]]) -> dict[str, float]:
        """`ppo_epochs` clipped policy-gradient updates on one step's rows (veRL's actor update on one
        mini-batch): the policy loss and the entropy bonus are aggregated by `loss_agg` over the trained
        tokens, as veRL's `loss_agg_mode` does."""
        # deferred: _model imports torch, an optional dependency (scripts/setup.d/40-verl.sh)
        from forge_eval.training.ablation._model import Responses, response_logprobs

        torch, c = self.torch, self.config
        self.model.train()
        batch = Responses.build(
            self.model,
            [r.prompt_ids.tolist() for r in rows],
            [r.response_ids.tolist() for r in rows],
            segments,
        )
        width = max(len(r.response_ids) for r in rows)

        def padded(values: list[np.ndarray]) -> Any:
            return torch.from_numpy(np.stack([np.pad(v, (0, width - len(v))) for v in values]))

        where = (batch.row, batch.offset)
        old = padded([r.logprobs for r in rows])[where]
        advantages = padded([r.advantages for r in rows])[where]
        mask = padded([r.response_mask for r in rows]).bool()

        def matrix(flat: Any) -> Any:
            return torch.zeros(mask.shape).index_put(where, flat)

        mismatch = 0.0
        losses, norms = [], []
        for epoch in range(c.ppo_epochs):
            logp, entropy = response_logprobs(self.model, batch)
            if epoch == 0:  # the sampler's logprobs and the trainer's must agree before any update
                mismatch = float((logp.detach() - old).abs().max())
            policy_loss = agg_loss(matrix(pg_losses(logp, old, advantages, c.clip)), mask, c.loss_agg)
            loss = policy_loss - c.entropy_coeff * agg_loss(matrix(entropy), mask, c.loss_agg)
            self.optimizer.zero_grad()
            loss.backward()
            norms.append(float(torch.nn.utils.clip_grad_norm_(self.model.parameters(), c.grad_clip)))
            self.optimizer.step()
            losses.append(float(loss.detach()))
        return {"loss": losses[0], "grad_norm": max(norms), "logprob_mismatch": mismatch}

    def execute(self) -> dict[str, Any]:
        """Train to `steps` (resuming from the checkpoint), evaluating every `eval_every` steps."""
        self.out.mkdir(parents=True, exist_ok=True)
        self._load()
        self.records = self.out / "records" if self.config.keep_records else _scratch_records()
        tuned = collector_tuned() if self.tune_collector else contextlib.nullcontext()
        try:
            with tuned:
                asyncio.run(self._train())
        finally:
            if not self.config.keep_records:
                shutil.rmtree(self.records, ignore_errors=True)
        # deferred: _model imports torch, an optional dependency (scripts/setup.d/40-verl.sh)
        from forge_eval.training.ablation._model import weights_hash

        c = self.config
        result = {
            "config": asdict(c),
            "init_hash": self.init_hash,
            "final_hash": weights_hash(self.model),
            "data_hash": _slots.order_hash(self.train_tasks, c.seed, c.steps, c.tasks_per_step),
            "heldout": [t.task_id for t in self.heldout],
            "seconds_per_step": self.state["seconds"] / max(1, c.steps),
            "train": self.state["train"],
            "eval": self.state["eval"],
        }
        write_json(self.out / RUN_FILE, result, indent=1)
        return result
