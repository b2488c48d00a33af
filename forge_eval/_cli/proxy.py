"""`forge-eval proxy`: run the recording proxy, compact its records to Parquet."""

from pathlib import Path

import click

from forge_eval._lazy import LazyCommand


@click.group()
def proxy() -> None:
    """The recording proxy between harnesses and an inference server."""


@proxy.command(cls=LazyCommand, target="forge_eval._cli._proxy:serve")
@click.option(
    "--upstream",
    "upstreams",
    multiple=True,
    required=True,
    metavar="URL",
    help="OpenAI-compatible server (vLLM, SGLang, llama.cpp); repeat for several (sticky per rollout).",
)
@click.option("--port", default=8377, type=click.IntRange(0, 65535), help="Data plane port.")
@click.option(
    "--host",
    default="127.0.0.1",
    help="Data plane bind address (harnesses); a non-loopback address is warned about.",
)
@click.option(
    "--control-port",
    default=8378,
    type=click.IntRange(0, 65535),
    help="Control plane port, always on 127.0.0.1 (rollouts, rewards, pause).",
)
@click.option(
    "--control-socket",
    default=None,
    type=click.Path(dir_okay=False, path_type=Path),
    help="Serve the control plane on this Unix socket (mode 0600) instead of --control-port.",
)
@click.option(
    "--records",
    "records_dir",
    default="runs/proxy-records",
    type=click.Path(file_okay=False, path_type=Path),
    help="Where call records are written (0700).",
)
@click.option(
    "--durability",
    type=click.Choice(["page-cache", "fsync"]),
    default="page-cache",
    help="When a call is answered: once its record is in the kernel (survives kill -9 of the proxy, not "
    "a power loss), or once it is on disk (fsync, group-committed: survives a power loss, costs latency).",
)
@click.option(
    "--secret-file",
    default=None,
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    help="File holding the key-signing secret [or env FORGE_PROXY_SECRET; default: RECORDS/.secret].",
)
@click.option(
    "--admin-key-file",
    default=None,
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    help="File holding the control plane's token [or env FORGE_PROXY_ADMIN_KEY; default RECORDS/.admin-key].",
)
@click.option("--secret", "argv_secret", default=None, hidden=True)
@click.option("--admin-key", "argv_admin_key", default=None, hidden=True)
@click.option(
    "--served-model", default=None, help="Model name sent upstream (default: the upstream's first)."
)
@click.option(
    "--model-alias",
    "aliases",
    multiple=True,
    help="Accepted model names (glob); repeat. Default: any name is served by the policy.",
)
@click.option("--max-body-mb", default=32.0, type=click.FloatRange(min=0.001))
@click.option(
    "--body-timeout",
    "body_timeout_s",
    default=60.0,
    type=click.FloatRange(min=0.1),
    help="Seconds a request body may take to arrive (a stalled client gets 408 and is disconnected).",
)
@click.option(
    "--keepalive",
    "keepalive_s",
    default=5.0,
    type=click.FloatRange(min=0.05),
    help="Seconds before a waiting stream gets headers and keep-alives.",
)
@click.option("--retries", default=4, type=click.IntRange(0, 20), help="Upstream retries.")
@click.option("--upstream-timeout", default=600.0, type=click.FloatRange(min=1))
@click.option("--no-token-ids", is_flag=True, help="Do not ask the upstream for token ids and logprobs.")
@click.option(
    "--upstream-key",
    envvar="FORGE_UPSTREAM_API_KEY",
    default=None,
    help="Bearer token for the upstream(s) [env FORGE_UPSTREAM_API_KEY].",
)
@click.option("--access-log", is_flag=True, help="Log every request (method, path, status) to stderr.")
def serve() -> None:
    """Serve harness calls from the upstream(s) and record each one under --records.

    Two listeners: the data plane on --host:--port for harnesses, and the control plane (rollouts,
    rewards) on 127.0.0.1:--control-port or --control-socket. Credentials never come from the command
    line, which every local process can read in /proc: the secret and the admin key come from
    FORGE_PROXY_SECRET / FORGE_PROXY_ADMIN_KEY or --secret-file / --admin-key-file, else they are
    generated once into RECORDS/.secret and RECORDS/.admin-key (0600) and reused on restart, so
    rollout keys keep working.
    """


@proxy.command(cls=LazyCommand, target="forge_eval._cli._proxy:compact")
@click.argument("records_dir", type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "--out",
    "out_dir",
    default=None,
    type=click.Path(file_okay=False, path_type=Path),
    help="Output directory (default: RECORDS_DIR/parquet).",
)
@click.option("--finished-only", is_flag=True, help="Skip rollouts still running.")
def compact() -> None:
    """Write calls.parquet and rollouts.parquet from a proxy's JSONL records."""


@proxy.command(cls=LazyCommand, target="forge_eval._cli._proxy_stats:stats")
@click.argument("records_dir", type=click.Path(file_okay=False, path_type=Path))
@click.option("--rollouts", "per_rollout", is_flag=True, help="Also print one line per rollout attempt.")
def stats() -> None:
    """Token fidelity of the recorded rollouts, per harness.

    share: calls whose prompt extends an earlier call's prompt + sampled completion token for token, over
    the calls after a rollout's first; breaks by cause: compaction, subagent (side conversations),
    template (the sampled tokens were re-rendered), history (earlier turns dropped or edited); no ids:
    answered calls without the engine's token ids, whose rollouts (unverified) training masks.
    """
