"""What `forge-eval ablate credit` and `ablate partial` do: train the variants side by side and compare."""

import shlex
import sys
from pathlib import Path
from typing import Any

import click

from forge_eval._cli._report import percent
from forge_eval._errors import UsageError
from forge_eval._status import status
from forge_eval.reports import build_ablation_report
from forge_eval.rundir import write_json
from forge_eval.training import ablation


def _names(value: str) -> tuple[str, ...]:
    return tuple(v.strip() for v in value.split(",") if v.strip())


def _echo_mode(mode: str, summary: dict[str, Any]) -> None:
    """One loss aggregation mode's table (a row per variant: every seed's final held-out success, the
    mean over runs with its 95% Wilson interval over runs, inside [0, 100]) and its verdict."""
    click.echo(f"loss aggregation {mode}:")
    for name, v in summary["variants"].items():
        f = v["final_success"]
        seeds = " ".join(f"{100 * x:3.0f}" for x in f["per_seed"].values())
        click.echo(
            f"  {name:<10} final held-out success per seed (%): {seeds}; mean {percent(f['estimate'])} "
            f"[{percent(f['bounded_low'])}, {percent(f['bounded_high'])}] (95% Wilson over runs)"
        )
    verdict = summary["verdict"]
    click.echo(f"  {verdict['headline']}")
    for sentence in [*verdict["pairs"], verdict["learned"], *verdict["internal_calls"]]:
        click.echo(f"    {sentence}")


def credit(
    variants: str,
    loss_agg: str,
    seeds: int,
    seed_base: int,
    steps: int,
    policy: str,
    harness: str,
    trainer: str,
    out: Path,
    replay_dir: Path | None,
    tasks_per_step: int,
    group_size: int,
    lr: float | None,
    ppo_epochs: int | None,
    entropy_coeff: float | None,
    min_lr_ratio: float | None,
    eval_every: int,
    n_heldout: int,
    jobs: int,
    resamples: int,
) -> None:
    """`forge-eval ablate credit` (its options and help: forge_eval/_cli/ablate.py)."""
    names = _names(variants)
    if resamples < 100:
        raise UsageError(f"--resamples must be at least 100, got {resamples}")
    command = shlex.join(["forge-eval", *sys.argv[1:]])
    if replay_dir is not None:
        data = ablation.replay(replay_dir, names, n_resamples=resamples)
        out.mkdir(parents=True, exist_ok=True)
        write_json(out / ablation.REPLAY_FILE, data, indent=1)
        for name, h in data["harnesses"].items():
            click.echo(f"{name}: {h['n_rollouts']} rollouts")
            for variant, v in h["variants"].items():
                shares = ", ".join(
                    f"{role} {100 * s['estimate']:.0f}%"
                    for role, s in v["token_share"].items()
                    if s["estimate"]
                )
                click.echo(f"  {variant:<10} trainable tokens by role: {shares or 'none'}")
        click.echo(f"report: {build_ablation_report(out)}")
        return
    config = ablation.AblationConfig(
        variants=names,
        loss_agg=_names(loss_agg),
        seeds=seeds,
        seed_base=seed_base,
        steps=steps,
        policy=policy,
        harness=harness,
        tasks_per_step=tasks_per_step,
        group_size=group_size,
        lr=lr,
        ppo_epochs=ppo_epochs,
        entropy_coeff=entropy_coeff,
        min_lr_ratio=min_lr_ratio,
        eval_every=eval_every,
        n_heldout=n_heldout,
    )
    config.check()
    if trainer == "verl":
        paths = ablation.write_verl_configs(out, names, [seed_base + k for k in range(seeds)], harness, steps)
        click.echo("\n".join(f"wrote {p}" for p in paths))
        click.echo(f"GPU commands: {out / 'verl' / 'run.sh'} (see training/configs/README.md; not run here)")
        return
    data = ablation.run_ablation(
        config,
        out,
        jobs=jobs,
        command=command,
        n_resamples=resamples,
        progress=status,
    )
    for mode, summary in data["by_loss_agg"].items():
        _echo_mode(mode, summary)
    click.echo(f"report: {build_ablation_report(out)}")


def _numbers(value: str, kind: type, option: str, example: str) -> tuple[Any, ...]:
    try:
        return tuple(kind(v) for v in _names(value))
    except ValueError:
        raise UsageError(
            f"{option} takes comma-separated {kind.__name__} values, got {value!r}",
            hint=f"e.g. {option} {example}",
        ) from None


def _echo_rate(rate: str, summary: dict[str, Any]) -> None:
    """One failure rate's table (a row per policy: final held-out success per seed, mean with its 95%
    Wilson interval over runs), what happened to the cut rollouts, and the verdict."""
    click.echo(f"failure rate {float(rate):.0%}:")
    for name, v in summary["variants"].items():
        f = v["final_success"]
        seeds = " ".join(f"{100 * x:3.0f}" for x in f["per_seed"].values())
        click.echo(
            f"  {name:<8} final held-out success per seed (%): {seeds}; mean {percent(f['estimate'])} "
            f"[{percent(f['bounded_low'])}, {percent(f['bounded_high'])}] (95% Wilson over runs)"
        )
    for name, c in summary["rollouts"].items():
        actions = ", ".join(f"{a} {n}" for a, n in sorted(c["actions"].items())) or "none"
        click.echo(
            f"  {name:<8} {c['cut']} of {c['rollouts']} training rollouts cut ({actions}; {c['resumed']} "
            f"resumed); groups trained short {c['groups_short']} ({c['members_lost']} members lost), "
            f"dropped {c['groups_dropped']}"
        )
    verdict = summary["verdict"]
    click.echo(f"  {verdict['headline']}")
    for sentence in [*verdict["pairs"], verdict["learned"], verdict["keeping"]]:
        if sentence:
            click.echo(f"    {sentence}")


def partial(
    policies: str,
    failure_rates: str,
    failure_points: str,
    credit: str,
    seeds: int,
    seed_base: int,
    steps: int,
    policy: str,
    out: Path,
    tasks_per_step: int,
    group_size: int,
    lr: float | None,
    ppo_epochs: int | None,
    entropy_coeff: float | None,
    min_lr_ratio: float | None,
    eval_every: int,
    n_heldout: int,
    jobs: int,
    resamples: int,
) -> None:
    """`forge-eval ablate partial` (its options and help: forge_eval/_cli/ablate.py)."""
    if resamples < 100:
        raise UsageError(f"--resamples must be at least 100, got {resamples}")
    config = ablation.PartialAblationConfig(
        policies=_names(policies),
        failure_rates=_numbers(failure_rates, float, "--failure-rates", "0.1,0.3"),
        failure_points=_numbers(failure_points, int, "--failure-points", "2,3"),
        credit=credit,
        seeds=seeds,
        seed_base=seed_base,
        steps=steps,
        policy=policy,
        tasks_per_step=tasks_per_step,
        group_size=group_size,
        lr=lr,
        ppo_epochs=ppo_epochs,
        entropy_coeff=entropy_coeff,
        min_lr_ratio=min_lr_ratio,
        eval_every=eval_every,
        n_heldout=n_heldout,
    )
    config.check()
    data = ablation.run_partial_ablation(
        config,
        out,
        jobs=jobs,
        command=shlex.join(["forge-eval", *sys.argv[1:]]),
        n_resamples=resamples,
        progress=status,
    )
    for rate, summary in data["by_failure_rate"].items():
        _echo_rate(rate, summary)
    click.echo(f"results: {out / ablation.PARTIAL_ABLATION_FILE}")
