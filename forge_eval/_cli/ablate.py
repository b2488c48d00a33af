"""`forge-eval ablate credit`: train the credit variants side by side (or replay real records) and compare."""

from pathlib import Path
from typing import Any

import click

from forge_eval._cli._options import resamples_option
from forge_eval._lazy import LazyCommand


def _policy_setting(flag: str, kind: type, what: str, note: str = "") -> Any:
    """A training setting whose default is the chosen policy's own: None here, filled in from the
    policy (each policy knows what suits it; `ablation.AblationConfig`)."""
    return click.option(flag, type=kind, default=None, help=f"{what} [default: the policy's own{note}].")


@click.group()
def ablate() -> None:
    """Ablations of the training method."""


@ablate.command(cls=LazyCommand, target="forge_eval._cli._ablate:credit")
@click.option(
    "--variants",
    default="broadcast,masked,terminal",
    help="Comma-separated credit variants.",
)
@click.option(
    "--loss-agg",
    default="token-mean",
    help="veRL loss aggregation mode(s): token-mean, seq-mean-token-mean, seq-mean-token-sum, token-sum; "
    "a comma list runs the ablation under each, with a verdict per mode.",
)
@click.option("--seeds", default=8, help="Training seeds (runs) per variant.")
@click.option("--seed-base", default=0, help="First seed.")
@click.option("--steps", default=25, help="GRPO steps per run.")
@click.option("--policy", default="tiny", help="Policy to train: tiny (from scratch) or smollm2.")
@click.option("--harness", default="plan-act", help="Harness the policy acts in.")
@click.option(
    "--trainer",
    type=click.Choice(["cpu", "verl"]),
    default="cpu",
    help="cpu: train here; verl: write the veRL GPU configs of the variants and the commands.",
)
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    default=Path("runs/ablate-credit"),
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
@click.option("--tasks-per-step", default=16, help="Tasks per GRPO step.")
@click.option("--group-size", default=8, help="Rollouts per task (GRPO group).")
@_policy_setting("--lr", float, "Adam learning rate", note="; every run's value is in ablation.json")
@_policy_setting("--ppo-epochs", int, "Clipped policy-gradient updates per batch of rollouts")
@_policy_setting(
    "--entropy-coeff", float, "Entropy bonus on the trained tokens, as veRL's actor.entropy_coeff"
)
@_policy_setting(
    "--min-lr-ratio",
    float,
    "Cosine learning-rate decay over the steps ends at this fraction of --lr (1: constant), as "
    "veRL's optim.min_lr_ratio with lr_scheduler_type cosine",
)
@click.option("--eval-every", default=5, help="Evaluate on the held-out tasks every N steps.")
@click.option("--heldout", "n_heldout", default=14, help="Held-out tasks (of 54).")
@click.option("--jobs", default=2, help="Runs trained in parallel (one core each).")
@resamples_option
def credit() -> None:
    """Compare the credit variants: broadcast (Eq. 1), masked, terminal.

    Trains each variant from the same initial weights with the same seeds and data order, evaluates every
    checkpoint on held-out tasks, and writes OUT/ablation.json and OUT/report.html (learning curves, success
    per run, run-level differences with intervals and sign-flip p values, a verdict per loss aggregation
    mode). Re-running the same command resumes.
    """


@ablate.command(cls=LazyCommand, target="forge_eval._cli._ablate:partial")
@click.option(
    "--policies",
    default="discard,zero,mask,carry",
    help="Comma-separated partial-rollout policies.",
)
@click.option(
    "--failure-rates",
    default="0.3",
    help="Share(s) of training rollouts cut by an injected timeout or crash; a comma list runs the "
    "ablation at each, with a verdict per rate.",
)
@click.option(
    "--failure-points",
    default="1,2,3",
    help="Calls a cut rollout has made when it is cut (drawn among these): 1 after the plan, 2 after the "
    "review, 3 after the first action.",
)
@click.option("--credit", default="masked", help="Credit variant every run trains with.")
@click.option("--seeds", default=9, help="Training seeds (runs) per policy and rate.")
@click.option("--seed-base", default=0, help="First seed.")
@click.option("--steps", default=16, help="GRPO steps per run.")
@click.option("--policy", default="tiny", help="Policy to train: tiny (from scratch) or smollm2.")
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    default=Path("runs/ablate-partial"),
    help="Output directory (partial-ablation.json, runs/).",
)
@click.option("--tasks-per-step", default=16, help="Tasks per GRPO step.")
@click.option("--group-size", default=8, help="Rollouts per task (GRPO group).")
@_policy_setting("--lr", float, "Adam learning rate")
@_policy_setting("--ppo-epochs", int, "Clipped policy-gradient updates per batch of rollouts")
@_policy_setting("--entropy-coeff", float, "Entropy bonus on the trained tokens")
@_policy_setting("--min-lr-ratio", float, "Cosine learning-rate decay ends at this fraction of --lr")
@click.option("--eval-every", default=4, help="Evaluate on the held-out tasks every N steps.")
@click.option("--heldout", "n_heldout", default=14, help="Held-out tasks (of 54).")
@click.option("--jobs", default=2, help="Runs trained in parallel (one core each).")
@resamples_option
def partial() -> None:
    """Compare the partial-rollout policies under injected failures: discard, zero, mask, carry.

    A share of the training rollouts is cut short by a timeout or a crash at a drawn point (the same
    rollouts for every policy of a seed); each policy decides what the batch does with them. Trains each
    policy from the same initial weights, seeds and data order, evaluates on held-out tasks (which never
    fail), and prints and writes OUT/partial-ablation.json: success per run, run-level differences and a
    verdict per failure rate, with whether keeping partial rollouts helps or hurts against discard.
    Re-running the same command resumes.
    """
