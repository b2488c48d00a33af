"""`run_ablation`: train every credit variant from the same initial policy, seeds and data order; compare.

Each (loss aggregation, variant, seed) run lives in `<out>/runs/<loss_agg>/<variant>-seed<seed>/` and is
finished when its `run.json` exists; an interrupted ablation resumes from the runs' checkpoints. Runs go
to `jobs` worker processes (spawned: the parent never initialises torch's threads before forking). The
statistics and the report are rebuilt from the run files at the end, so they can be recomputed without
training.
"""

import json
import multiprocessing
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from forge_eval._errors import ForgeError, UsageError
from forge_eval._registry import Registry
from forge_eval._status import duration, status
from forge_eval.analysis import N_RESAMPLES
from forge_eval.rundir import write_json
from forge_eval.training.ablation._harness import HARNESS
from forge_eval.training.ablation._loss import DEFAULT_LOSS_AGG, LOSS_AGGREGATIONS
from forge_eval.training.ablation._policies import POLICIES
from forge_eval.training.ablation._run import RUN_FILE, Run, RunConfig
from forge_eval.training.ablation._summary import summarize
from forge_eval.training.credit import CREDIT_VARIANTS

ABLATION_FILE = "ablation.json"
POLICY_SETTINGS = ("lr", "ppo_epochs", "entropy_coeff", "min_lr_ratio")  # None: the policy's own
CONFIG_FILE = "ablation-config.json"
# a variant's step time relative to the others' (measured; 1 where absent): broadcast trains the planner's
# and the subagent's tokens as well as the actions', three rows per rollout where the others train one
STEP_COST = {"broadcast": 1.4}


ABLATION_HARNESSES: Registry[str] = Registry("ablation harness")
ABLATION_HARNESSES.register(HARNESS, "planner call + reviewer subagent call + set actions, through the proxy")


@dataclass(frozen=True)
class AblationConfig:
    """What an ablation trains; every variant gets the same settings, seeds and data order, under each
    loss aggregation mode of `loss_agg` in turn."""

    variants: tuple[str, ...] = ("broadcast", "masked", "terminal")
    loss_agg: tuple[str, ...] = (DEFAULT_LOSS_AGG,)
    seeds: int = 8  # the fewest runs whose sign-flip test can pass Bonferroni over 3 pairs x 2 metrics
    seed_base: int = 0
    steps: int = RunConfig.steps
    policy: str = "tiny"
    harness: str = HARNESS
    tasks_per_step: int = RunConfig.tasks_per_step
    group_size: int = RunConfig.group_size
    lr: float | None = None  # None: the policy's own (`POLICIES`)
    ppo_epochs: int | None = None
    entropy_coeff: float | None = None
    min_lr_ratio: float | None = None
    eval_every: int = RunConfig.eval_every
    n_heldout: int = RunConfig.n_heldout

    def check(self) -> None:
        """Refuse bad settings before any work starts (unknown names list the valid ones)."""
        for v in self.variants:
            CREDIT_VARIANTS.get(v)
        if len(set(self.variants)) != len(self.variants) or not self.variants:
            raise UsageError(f"--variants must name distinct variants, got {','.join(self.variants)!r}")
        for mode in self.loss_agg:
            LOSS_AGGREGATIONS.get(mode)
        if len(set(self.loss_agg)) != len(self.loss_agg) or not self.loss_agg:
            raise UsageError(f"--loss-agg must name distinct modes, got {','.join(self.loss_agg)!r}")
        ABLATION_HARNESSES.get(self.harness)
        policy = POLICIES.get(self.policy)
        missing = policy.missing()
        if missing:
            raise ForgeError(f"--policy {self.policy} cannot run here: {missing}", hint=policy.install_hint)
        for name in ("seeds", "steps", "tasks_per_step", "eval_every", "ppo_epochs"):
            if getattr(self, name) is not None and getattr(self, name) < 1:
                raise UsageError(f"--{name.replace('_', '-')} must be at least 1, got {getattr(self, name)}")
        if self.lr is not None and not self.lr > 0:
            raise UsageError(f"--lr must be positive, got {self.lr}")
        if self.entropy_coeff is not None and not self.entropy_coeff >= 0:
            raise UsageError(f"--entropy-coeff must be at least 0, got {self.entropy_coeff}")
        if self.min_lr_ratio is not None and not 0 <= self.min_lr_ratio <= 1:
            raise UsageError(f"--min-lr-ratio must be in [0, 1], got {self.min_lr_ratio}")
        if self.group_size < 2:
            raise UsageError(
                f"--group-size must be at least 2 (GRPO needs a baseline), got {self.group_size}"
            )

    def run_configs(self) -> list[RunConfig]:
        policy = POLICIES.get(self.policy)
        shared = {
            f.name: getattr(self, f.name)
            for f in fields(RunConfig)
            if hasattr(self, f.name) and f.name not in ("variant", "seed", "loss_agg")
        } | {k: getattr(policy, k) if getattr(self, k) is None else getattr(self, k) for k in POLICY_SETTINGS}
        return [
            RunConfig(variant=v, seed=self.seed_base + k, loss_agg=mode, **shared)
            for mode in self.loss_agg
            for k in range(self.seeds)
            for v in self.variants
        ]


class _Pace:
    """Runs done of all and the ablation's ETA, from the pace of the runs finished by this process (runs
    go in parallel, so elapsed time per finished run is the throughput, whatever `jobs` is)."""

    def __init__(self, total: int, done: int) -> None:
        self.total, self.done, self._finished = total, done, 0
        self._started = time.monotonic()

    def finished(self) -> str:
        self.done += 1
        self._finished += 1
        left = (time.monotonic() - self._started) / self._finished * (self.total - self.done)
        return f"{self.done}/{self.total} runs, ETA {duration(left)}"


def longest_first(configs: list[RunConfig]) -> list[RunConfig]:
    """`configs` in the order the workers take them: the costliest variant's runs first, each variant's in
    seed order. Longest-first leaves the short runs to fill in at the end, so that no worker sits idle
    while the last long run finishes (in seed order a broadcast run can be the last to start)."""
    return sorted(configs, key=lambda rc: -STEP_COST.get(rc.variant, 1.0))


def run_dir(out: Path, config: RunConfig) -> Path:
    return out / "runs" / config.loss_agg / f"{config.variant}-seed{config.seed}"


def _execute(config: RunConfig, out: str) -> dict[str, Any]:
    return Run(config, Path(out)).execute()


def claim(out: Path, wanted: dict[str, Any], command: str) -> None:
    """Record the configuration `wanted`; a different ablation pointed at the same directory is refused."""
    path = out / CONFIG_FILE
    if path.exists():
        saved = json.loads(path.read_text())["config"]
        if saved != wanted:
            changed = sorted(k for k in wanted if saved.get(k) != wanted[k])
            raise UsageError(
                f"{out} holds an ablation with other settings ({', '.join(changed)} differ)",
                hint="re-run with the same settings to resume, or pass another --out",
            )
        return
    out.mkdir(parents=True, exist_ok=True)
    write_json(path, {"config": wanted, "command": command}, indent=1)


def run_ablation(
    config: AblationConfig,
    out: Path,
    *,
    jobs: int = 2,
    command: str = "",
    progress: Callable[[str], None] = status,
    n_resamples: int = N_RESAMPLES,
) -> dict[str, Any]:
    """Train (or resume) every run of the ablation, then write `out/ablation.json` and return it."""
    config.check()
    claim(out, _settings(config), command)
    several = len(config.loss_agg) > 1
    results = train_runs(
        {rc: run_dir(out, rc) for rc in config.run_configs()},
        jobs=jobs,
        progress=progress,
        label=lambda rc: f"{rc.variant} seed {rc.seed}" + (f" ({rc.loss_agg})" if several else ""),
    )
    return write_summary(out, config, results, command=command, n_resamples=n_resamples)


def train_runs(
    dirs: dict[RunConfig, Path],
    *,
    jobs: int,
    progress: Callable[[str], None],
    label: Callable[[RunConfig], str],
) -> dict[RunConfig, dict[str, Any]]:
    """Every run of `dirs` (its directory each): the finished ones read back, the others trained `jobs`
    at a time (longest first), with a progress line per finished run."""
    results: dict[RunConfig, dict[str, Any]] = {}
    todo = []
    for rc, where in dirs.items():
        done = where / RUN_FILE
        if done.exists():
            results[rc] = json.loads(done.read_text())
        else:
            todo.append(rc)
    if todo:
        progress(f"training {len(todo)} run(s) ({len(results)} already done), {jobs} at a time")
        pace = _Pace(len(todo) + len(results), len(results))
        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(max_workers=max(1, jobs), mp_context=context) as pool:
            futures = {pool.submit(_execute, rc, str(dirs[rc])): rc for rc in longest_first(todo)}
            for future in as_completed(futures):
                rc = futures[future]
                results[rc] = future.result()
                final = results[rc]["eval"][-1]["success"]
                progress(
                    f"{label(rc)} done: held-out success {final:.0%} "
                    f"({results[rc]['seconds_per_step']:.2f} s/step), {pace.finished()}"
                )
    return results


def _settings(config: AblationConfig) -> dict[str, Any]:
    return asdict(config) | {"variants": list(config.variants), "loss_agg": list(config.loss_agg)}


def write_summary(
    out: Path,
    config: AblationConfig,
    results: dict[RunConfig, dict[str, Any]],
    *,
    command: str,
    n_resamples: int,
) -> dict[str, Any]:
    """Statistics per loss aggregation mode (each its own verdict) from the finished runs."""
    run_configs = config.run_configs()
    by_mode = {
        mode: summarize(
            {
                v: [results[rc] for rc in run_configs if rc.variant == v and rc.loss_agg == mode]
                for v in config.variants
            },
            n_resamples=n_resamples,
        )
        for mode in config.loss_agg
    }
    runs = [
        {k: results[rc][k] for k in ("config", "init_hash", "data_hash", "final_hash", "seconds_per_step")}
        for rc in run_configs
    ]
    document = {
        "kind": "credit-ablation",
        "command": command,
        # the settings a run resolved from its policy (None in the command means "the policy's own")
        "config": _settings(config) | {k: getattr(run_configs[0], k) for k in POLICY_SETTINGS},
        "heldout_tasks": next(iter(results.values()))["heldout"],
        "runs": runs,
        "by_loss_agg": by_mode,
    }
    write_json(out / ABLATION_FILE, document, indent=1)
    return document
