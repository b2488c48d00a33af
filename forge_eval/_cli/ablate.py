"""`forge-eval ablate credit`: train the credit variants side by side (or replay real records) and compare."""

import shlex
import sys
from pathlib import Path
from typing import Any

import click

from forge_eval._errors import UsageError
from forge_eval._status import status


@click.group()
def ablate() -> None:
    """Ablations of the training method."""


def _names(value: str) -> tuple[str, ...]:
    return tuple(v.strip() for v in value.split(",") if v.strip())


def _percent(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}"


def _echo_mode(mode: str, summary: dict[str, Any]) -> None:
    """One loss aggregation mode's table (a row per variant: every seed's final held-out success, the
    mean over runs with its 95% t interval) and its verdict."""
    click.echo(f"loss aggregation {mode}:")
    for name, v in summary["variants"].items():
        f = v["final_success"]
        seeds = " ".join(f"{100 * x:3.0f}" for x in f["per_seed"].values())
        click.echo(
            f"  {name:<10} final held-out success per seed (%): {seeds}; mean {_percent(f['estimate'])} "
            f"[{_percent(f['t_low'])}, {_percent(f['t_high'])}] (95% t over runs)"
        )
    verdict = summary["verdict"]
    click.echo(f"  {verdict['headline']}")
    for sentence in [*verdict["pairs"], verdict["learned"], *verdict["internal_calls"]]:
        click.echo(f"    {sentence}")


@ablate.command()
@click.option(
    "--variants",
    default="broadcast,masked,terminal",
    show_default=True,
    help="Comma-separated credit variants.",
)
@click.option(
    "--loss-agg",
    default="token-mean",
    show_default=True,
    help="veRL loss aggregation mode(s): token-mean, seq-mean-token-mean, seq-mean-token-sum, token-sum; "
    "a comma list runs the ablation under each, with a verdict per mode.",
)
@click.option("--seeds", default=8, show_default=True, help="Training seeds (runs) per variant.")
@click.option("--seed-base", default=0, show_default=True, help="First seed.")
@click.option("--steps", default=25, show_default=True, help="GRPO steps per run.")
@click.option(
    "--policy", default="tiny", show_default=True, help="Policy to train: tiny (from scratch) or smollm2."
)
@click.option("--harness", default="plan-act", show_default=True, help="Harness the policy acts in.")
@click.option(
    "--trainer",
    type=click.Choice(["cpu", "verl"]),
    default="cpu",
    show_default=True,
    help="cpu: train here; verl: write the veRL GPU configs of the variants and the commands.",
)
@click.option(
    "--out",
    "out",
    type=click.Path(path_type=Path),
    default=Path("runs/ablate-credit"),
    show_default=True,
    help="Output directory (ablation.json, report.html, runs/).",
)
@click.option(
    "--replay",
    "replay_dir",
    type=click.Path(path_type=Path),
    default=None,
    help="Proxy records of real harness runs: report each variant's token and advantage shares per "
    "role, without training.",
)
@click.option("--tasks-per-step", default=16, show_default=True, help="Tasks per GRPO step.")
@click.option("--group-size", default=8, show_default=True, help="Rollouts per task (GRPO group).")
@click.option(
    "--lr",
    type=float,
    default=None,
    help="Adam learning rate [default: the policy's own; every run's value is in ablation.json].",
)
@click.option(
    "--ppo-epochs",
    type=int,
    default=None,
    help="Clipped policy-gradient updates per batch of rollouts [default: the policy's own].",
)
@click.option(
    "--entropy-coeff",
    type=float,
    default=None,
    help="Entropy bonus on the trained tokens, as veRL's actor.entropy_coeff [default: the policy's own].",
)
@click.option(
    "--eval-every", default=5, show_default=True, help="Evaluate on the held-out tasks every N steps."
)
@click.option("--heldout", "n_heldout", default=14, show_default=True, help="Held-out tasks (of 54).")
@click.option("--jobs", default=2, show_default=True, help="Runs trained in parallel (one core each).")
@click.option("--resamples", default=10_000, show_default=True, help="Bootstrap resamples per interval.")
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
    eval_every: int,
    n_heldout: int,
    jobs: int,
    resamples: int,
) -> None:
    """Compare the credit variants: broadcast (Eq. 1), masked, terminal.

    Trains each variant from the same initial weights with the same seeds and data order, evaluates every
    checkpoint on held-out tasks, and writes OUT/ablation.json and OUT/report.html (learning curves, success
    per run, run-level differences with intervals and sign-flip p values, a verdict per loss aggregation
    mode). Re-running the same command resumes.
    """
    names = _names(variants)
    if resamples < 100:
        raise UsageError(f"--resamples must be at least 100, got {resamples}")
    command = shlex.join(["forge-eval", *sys.argv[1:]])
    # deferred: pandas and matplotlib load only when the command runs (fast --help)
    from forge_eval.reports import build_ablation_report
    from forge_eval.rundir import write_json
    from forge_eval.training import ablation

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
