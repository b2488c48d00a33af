"""What `forge-eval run --dry-run` prints: the plan in words, or as JSON (`--json`) for machines."""

import json

import click

from forge_eval.benchmarks import reason_counts
from forge_eval.runner import DryRun, RunSpec, dry_run


def show_dry_run(
    specs: list[RunSpec], cluster: str | None, shards: int | None, shared: bool, as_json: bool
) -> None:
    """Print the plan of each spec (one, or one per harness of a harness matrix); then raise what would
    stop the real run here (its error, so its exit status)."""
    planned = [dry_run(spec, cluster, shards, shared) for spec in specs]
    if as_json:
        data = [p.to_dict() for p in planned]
        click.echo(json.dumps(data[0] if len(data) == 1 else {"harnesses": data}, indent=2))
    else:
        click.echo("\n\n".join(describe(p) for p in planned))
    blockers = [b for p in planned for b in p.plan.blockers]
    if blockers:
        raise blockers[0]


def describe(dry: DryRun) -> str:
    """The plan in words: what runs per seed, the shards, the skipped tasks with their reasons."""
    plan, spec = dry.plan, dry.plan.spec
    seeds = f"seeds {', '.join(map(str, spec.seeds))}: each" if spec.seeds[1:] else f"seed {spec.seeds[0]}:"
    lines = [
        f"dry run of {plan.benchmark.name} (nothing is started or created)",
        f"harness: {plan.harness}",
        f"model:   {dry.model}",
        *plan.notes,
        f"{seeds} runs {_count(len(dry.task_ids), 'task')} x {_count(dry.epochs, 'epoch')}"
        f" = {dry.samples} samples in all",
        f"tasks:   {plan.n_total} chosen, {len(plan.task_ids)} runnable here, {len(plan.skipped)} skipped"
        + (f", {len(dry.beyond_limit)} left out by --limit {spec.limit}" if dry.beyond_limit else ""),
        _out_line(dry),
    ]
    if dry.shards is not None:
        shard_set = dry.shards.shards
        lines.append(f"shards:  {len(shard_set)} on {dry.shards.where}")
        for shard in shard_set:
            kept = " (finished earlier: kept)" if shard.key in dry.shards.finished else ""
            lines.append(
                f"  {shard.key}: {_count(len(shard.task_ids), 'task')}, {shard.samples} samples{kept}"
            )
    lines.append(f"\ntasks each seed runs ({len(dry.task_ids)}):")
    lines += [f"  {task_id}" for task_id in dry.task_ids]
    if plan.skipped:
        lines.append(f"\nskipped ({len(plan.skipped)}), by reason:")
        lines += [f"  {n:4d}  {reason}" for reason, n in reason_counts(plan.skipped)]
        lines.append("skipped tasks:")
        lines += [f"  {task_id}: {reason}" for task_id, reason in plan.skipped.items()]
    if plan.blockers:
        lines.append("\nthe run would stop here before starting:")
    return "\n".join(lines)


def _out_line(dry: DryRun) -> str:
    out = dry.plan.spec.out
    if not dry.out_exists:
        return f"run dir: {out} (the run creates it)"
    return f"run dir: {out} (exists: the run resumes it; {dry.finished_before} samples finished earlier)"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"
