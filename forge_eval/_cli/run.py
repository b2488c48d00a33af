"""`forge-eval run BENCH`: a benchmark over several seeds, with CIs and a report."""

from pathlib import Path

import click

from forge_eval._cli._options import step_budget_option
from forge_eval._lazy import lazy_command


@lazy_command("forge_eval._cli._run:run")
@click.argument("benchmark")
@click.option("--seeds", type=click.IntRange(min=1), default=3, help="Number of seeds.")
@click.option("--seed-base", type=int, default=0, help="First seed.")
@click.option(
    "--epochs",
    type=click.IntRange(min=1),
    default=None,
    help="Trials per task per seed (enables pass@k and pass^k for k <= epochs). "
    "Default: the benchmark's official trial count.",
)
@click.option(
    "--model",
    default=None,
    help="Embedded model name (see `forge-eval list`) or an Inspect model string "
    "(e.g. openai-api/vllm/Qwen2.5-7B-Instruct). Default: the embedded model, started here.",
)
@click.option("--model-base-url", default=None, help="Base URL of an OpenAI-compatible endpoint.")
@click.option("-M", "model_args", multiple=True, metavar="KEY=VALUE", help="Inspect model argument.")
@click.option(
    "--harness",
    default=None,
    help="Harness name (default: the benchmark's own). Several, comma-separated (react,codex): a harness "
    "matrix, the same tasks and seeds under each harness, compared pairwise in one report.",
)
@click.option("--limit", type=click.IntRange(min=1), default=None, help="Run only the first N tasks.")
@click.option("--quick", is_flag=True, help="Run only the benchmark's quick subset of tasks.")
@click.option("--temperature", type=float, default=None, help="Sampling temperature (default: the model's).")
@click.option(
    "--max-tokens",
    type=click.IntRange(min=1),
    default=None,
    help="Most tokens per model reply. Default: the benchmark's setting; for an embedded model, "
    "its reply cap (256 tokens).",
)
@click.option(
    "--max-connections", type=click.IntRange(min=1), default=None, help="Concurrent model connections."
)
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Run directory (default: runs/<benchmark>).",
)
@click.option(
    "--judge",
    default=None,
    help="Judge model of a benchmark scored by an LLM judge (Inspect model role 'judge'): an Inspect "
    "model string or an embedded model name. Default: the benchmark's official judge.",
)
@click.option(
    "--model-role",
    "model_roles",
    multiple=True,
    metavar="ROLE=MODEL",
    help="Bind an Inspect model role the benchmark's code calls to a model (an Inspect model string or an "
    "embedded model name), as `inspect eval --model-role` does, e.g. --model-role user=openai/gpt-4o "
    "(Claw-Eval's simulated user); --model-role judge=MODEL is --judge MODEL.",
)
@click.option(
    "--data-dir",
    type=click.Path(path_type=Path),
    default=None,
    help="Local copy of the benchmark's official task data (default: its upstream source).",
)
@click.option(
    "--deterministic",
    is_flag=True,
    help="Serve the embedded model in its exactly repeatable mode (no prompt cache, one request at a time).",
)
@click.option(
    "--no-sandbox",
    is_flag=True,
    help="Run harness programs (codex, claude-code, openclaw) directly on this host, without the local "
    "sandbox: unisolated, for debugging only.",
)
@click.option(
    "--shared-run-dir",
    is_flag=True,
    help="Create the run directory with the umask's modes, readable by other users. By default only this "
    "user may read it (0700, files 0600): its logs hold the transcripts and the model's answers.",
)
@click.option(
    "--allow-modified-tree",
    is_flag=True,
    help="Run on an upstream benchmark tree whose files differ from the pinned commit's where the run reads "
    "them (refused by default). The protocol record names the files and the run is not comparable.",
)
@step_budget_option(
    "Also report every metric as if each trajectory were cut at N model turns (budgets.json, report)."
)
@click.option(
    "--cluster",
    envvar="FORGE_CLUSTER",
    default=None,
    help="Run the shards of the run on a cluster: ray://HOST:PORT, ray:auto (the Ray cluster this machine "
    "belongs to), k8s[:NAMESPACE] (a Job per shard) or local (shards one after another here). "
    "Default: $FORGE_CLUSTER, else one in-process run of all seeds.",
)
@click.option(
    "--shards",
    type=click.IntRange(min=1),
    default=None,
    help="With --cluster: split the run into about N shards (each seed's tasks cut into slices). "
    "Default: as many as the cluster runs at once, at least one per seed.",
)
@click.option(
    "--shared-logs",
    is_flag=True,
    help="With --cluster ray: the workers see --out at the same path (a shared file system) and write "
    "their logs there; by default each shard's logs come back through Ray's object store.",
)
@click.option(
    "--dry-run",
    is_flag=True,
    help="Print the tasks each seed would run, the skipped ones with their reasons and the shards, then "
    "stop: no model, proxy, desktop or sandbox is started and no run directory is created.",
)
@click.option("--json", "as_json", is_flag=True, help="With --dry-run: print the plan as JSON.")
@click.option("-T", "task_args", multiple=True, metavar="KEY=VALUE", help="Task argument of the benchmark.")
def run() -> None:
    """Run BENCHMARK over several seeds; resumable: re-run the same command to finish an interrupted run."""
