"""`run_partial_ablation`: train every partial-rollout policy under injected failures; compare.

The credit ablation's harness, policy and trainer, with a share of the training rollouts cut short by
an injected timeout or crash after a drawn number of calls (`draw_cut`: seeded by run seed, step and
rollout, so every policy of a seed meets the same failures on the same rollouts, from the same weights
and data order). Each policy decides what the batch does with the cut rollouts
(`forge_eval.training.partial`); held-out evaluation never fails. The unit is the training run and the
statistics are the credit ablation's (`summarize`), one family and verdict per failure rate.

Each (rate, policy, seed) run lives in `<out>/runs/rate-<rate>/<policy>-seed<seed>/`; an interrupted
ablation resumes from the runs' checkpoints.
"""

from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from forge_eval._errors import UsageError
from forge_eval._status import status
from forge_eval.analysis import N_RESAMPLES
from forge_eval.rundir import write_json
from forge_eval.training.ablation._experiment import (
    POLICY_SETTINGS,
    AblationConfig,
    claim,
    train_runs,
)
from forge_eval.training.ablation._harness import CALLS, HARNESS
from forge_eval.training.ablation._run import RunConfig
from forge_eval.training.ablation._summary import summarize
from forge_eval.training.partial import PARTIAL_POLICIES

PARTIAL_ABLATION_FILE = "partial-ablation.json"
BASELINE = "discard"  # the paper's policy: what keeping partial rollouts is compared with


@dataclass(frozen=True)
class PartialAblationConfig:
    """What a partial ablation trains: every policy gets the same settings, seeds, data order and
    failures, at each failure rate of `failure_rates` in turn. The default: 4 policies x 9 seeds (the
    fewest whose sign-flip test can pass Bonferroni over 6 pairs x 2 metrics) of 16 steps, 36 runs whose
    CPU time, at the credit ablation's measured step times, fits 15 minutes on 2 idle cores."""

    policies: tuple[str, ...] = ("discard", "zero", "mask", "carry")
    failure_rates: tuple[float, ...] = (0.3,)
    failure_points: tuple[int, ...] = tuple(range(1, CALLS))
    credit: str = "masked"
    seeds: int = 9
    seed_base: int = 0
    steps: int = 16
    policy: str = "tiny"
    tasks_per_step: int = 16
    group_size: int = 8
    lr: float | None = None
    ppo_epochs: int | None = None
    entropy_coeff: float | None = None
    min_lr_ratio: float | None = None
    eval_every: int = 4
    n_heldout: int = 14

    def _base(self) -> AblationConfig:
        shared = {k: v for k, v in asdict(self).items() if k in AblationConfig.__dataclass_fields__}
        return AblationConfig(variants=(self.credit,), harness=HARNESS, **shared)

    def check(self) -> None:
        """Refuse bad settings before any work starts (unknown names list the valid ones)."""
        self._base().check()
        for name in self.policies:
            PARTIAL_POLICIES.get(name)
        if not self.policies or len(set(self.policies)) != len(self.policies):
            raise UsageError(f"--policies must name distinct policies, got {','.join(self.policies)!r}")
        if not self.failure_rates or len(set(self.failure_rates)) != len(self.failure_rates):
            raise UsageError(f"--failure-rates must be distinct, got {self.failure_rates}")
        for rate in self.failure_rates:
            if not 0 <= rate < 1:
                raise UsageError(
                    f"--failure-rates must lie in [0, 1), got {rate}",
                    hint="a share of the training rollouts, e.g. 0.3; at 1 no rollout would finish",
                )
        points = set(self.failure_points)
        if not points or len(points) != len(self.failure_points) or not points <= set(range(1, CALLS)):
            raise UsageError(
                f"--failure-points must be distinct call counts in 1..{CALLS - 1}, got {self.failure_points}",
                hint=f"a {HARNESS} rollout makes {CALLS} calls (plan, review, {CALLS - 2} actions); a cut "
                "after n of them stops it before call n + 1",
            )

    def run_configs(self) -> list[RunConfig]:
        base = {rc.seed: rc for rc in self._base().run_configs()}
        return [
            replace(base[self.seed_base + k], partial=p, failure_rate=r, failure_points=self.failure_points)
            for r in self.failure_rates
            for k in range(self.seeds)
            for p in self.policies
        ]


def _rate(rate: float) -> str:
    return f"{rate:g}"


def run_dir(out: Path, config: RunConfig) -> Path:
    return out / "runs" / f"rate-{_rate(config.failure_rate)}" / f"{config.partial}-seed{config.seed}"


def _settings(config: PartialAblationConfig) -> dict[str, Any]:
    return asdict(config) | {
        k: list(getattr(config, k)) for k in ("policies", "failure_rates", "failure_points")
    }


def run_partial_ablation(
    config: PartialAblationConfig,
    out: Path,
    *,
    jobs: int = 2,
    command: str = "",
    progress: Callable[[str], None] = status,
    n_resamples: int = N_RESAMPLES,
) -> dict[str, Any]:
    """Train (or resume) every run, then write `out/partial-ablation.json` and return it."""
    config.check()
    claim(out, _settings(config), command)
    several = len(config.failure_rates) > 1
    run_configs = config.run_configs()
    results = train_runs(
        {rc: run_dir(out, rc) for rc in run_configs},
        jobs=jobs,
        progress=progress,
        label=lambda rc: (
            f"{rc.partial} seed {rc.seed}" + (f" (failure rate {_rate(rc.failure_rate)})" if several else "")
        ),
    )
    by_rate = {}
    for rate in config.failure_rates:
        runs = {
            p: [results[rc] for rc in run_configs if rc.partial == p and rc.failure_rate == rate]
            for p in config.policies
        }
        summary = summarize(runs, n_resamples=n_resamples)
        summary["rollouts"] = {p: rollout_counts(r) for p, r in runs.items()}
        summary["verdict"]["keeping"] = keeping_sentence(summary, rate)
        by_rate[_rate(rate)] = summary
    document = {
        "kind": "partial-ablation",
        "command": command,
        "config": _settings(config) | {k: getattr(run_configs[0], k) for k in POLICY_SETTINGS},
        "heldout_tasks": next(iter(results.values()))["heldout"],
        "runs": [
            {
                k: results[rc][k]
                for k in ("config", "init_hash", "data_hash", "final_hash", "seconds_per_step")
            }
            for rc in run_configs
        ],
        "by_failure_rate": by_rate,
    }
    write_json(out / PARTIAL_ABLATION_FILE, document, indent=1)
    return document


RUN_KEYS = ("config", "init_hash", "data_hash", "final_hash", "seconds_per_step")
COUNTS = ("cut", "resumed", "held", "groups_short", "members_lost", "groups_dropped")


def rollout_counts(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """What the policy did with the cut rollouts, summed over its runs' training steps: rollouts cut,
    each action taken on them, and the GRPO groups that trained short or were dropped."""
    steps = [m for r in runs for m in r["train"]]
    parts = [m["partial"] for m in steps if "partial" in m]
    actions: dict[str, int] = {}
    for part in parts:
        for action, n in part["actions"].items():
            actions[action] = actions.get(action, 0) + n
    total = sum(len(r["train"]) * r["config"]["tasks_per_step"] * r["config"]["group_size"] for r in runs)
    return {"rollouts": total, "actions": actions} | {k: sum(p[k] for p in parts) for k in COUNTS}


def keeping_sentence(summary: dict[str, Any], rate: float) -> str | None:
    """Does keeping partial rollouts help or hurt at this failure rate: each policy against `discard`,
    read off the pair statistics (told apart on final success, else on the area under the curve)."""
    if BASELINE not in summary["variants"] or len(summary["variants"]) < 2:
        return None
    parts = []
    for pair in summary["pairs"]:
        if BASELINE not in (pair["a"], pair["b"]):
            continue
        other = pair["b"] if pair["a"] == BASELINE else pair["a"]
        sign = 1 if pair["b"] == other else -1  # pair differences are b - a
        told = [m for m in ("final", "auc") if pair["told_apart"][m]]
        if told:
            metric = told[0]
            diff = sign * pair[metric]["estimate"]
            what = "final held-out success" if metric == "final" else "area under the held-out curve"
            parts.append(f"{other} {'helps' if diff > 0 else 'hurts'} ({what} {100 * diff:+.1f} points)")
        else:
            diff = sign * pair["final"]["estimate"]
            parts.append(f"{other} is not told apart (final {100 * diff:+.1f} points)")
    return f"At a failure rate of {rate:.0%}, against {BASELINE}: " + "; ".join(parts) + "."
