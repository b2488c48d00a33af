"""`forge-eval proxy`: run the recording proxy, compact its records to Parquet."""

import os
import secrets
from pathlib import Path

import click

from forge_eval._errors import UsageError


@click.group()
def proxy() -> None:
    """The recording proxy between harnesses and an inference server."""


@proxy.command()
@click.option(
    "--upstream",
    "upstreams",
    multiple=True,
    required=True,
    metavar="URL",
    help="OpenAI-compatible server (vLLM, SGLang, llama.cpp); repeat for several (sticky per rollout).",
)
@click.option("--port", default=8377, show_default=True, type=click.IntRange(0, 65535))
@click.option("--host", default="127.0.0.1", show_default=True, help="Bind address.")
@click.option(
    "--records",
    "records_dir",
    default="runs/proxy-records",
    show_default=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Where call records are written.",
)
@click.option(
    "--secret",
    envvar="FORGE_PROXY_SECRET",
    default=None,
    help="Signs rollout API keys and is the admin key unless --admin-key [env FORGE_PROXY_SECRET].",
)
@click.option("--admin-key", envvar="FORGE_PROXY_ADMIN_KEY", default=None, help="Control-plane bearer token.")
@click.option(
    "--served-model", default=None, help="Model name sent upstream (default: the upstream's first)."
)
@click.option(
    "--model-alias",
    "aliases",
    multiple=True,
    help="Accepted model names (glob); repeat. Default: any name is served by the policy.",
)
@click.option("--max-body-mb", default=32.0, show_default=True, type=click.FloatRange(min=0.001))
@click.option(
    "--keepalive",
    "keepalive_s",
    default=5.0,
    show_default=True,
    type=click.FloatRange(min=0.05),
    help="Seconds before a waiting stream gets headers and keep-alives.",
)
@click.option("--retries", default=4, show_default=True, type=click.IntRange(0, 20), help="Upstream retries.")
@click.option("--upstream-timeout", default=600.0, show_default=True, type=click.FloatRange(min=1))
@click.option("--no-token-ids", is_flag=True, help="Do not ask the upstream for token ids and logprobs.")
@click.option(
    "--upstream-key",
    envvar="FORGE_UPSTREAM_API_KEY",
    default=None,
    help="Bearer token for the upstream(s) [env FORGE_UPSTREAM_API_KEY].",
)
@click.option("--access-log", is_flag=True, help="Log every request (method, path, status) to stderr.")
def serve(
    upstreams: tuple[str, ...],
    port: int,
    host: str,
    records_dir: Path,
    secret: str | None,
    admin_key: str | None,
    served_model: str | None,
    aliases: tuple[str, ...],
    max_body_mb: float,
    keepalive_s: float,
    retries: int,
    upstream_timeout: float,
    no_token_ids: bool,
    upstream_key: str | None,
    access_log: bool,
) -> None:
    """Serve harness calls from the upstream(s) and record each one under --records."""
    from forge_eval.training.proxy import ProxyConfig, create_app, serve_forever

    for url in upstreams:
        if not url.startswith(("http://", "https://")):
            raise UsageError(
                f"--upstream must be an http(s) URL, got {url!r}", "e.g. --upstream http://127.0.0.1:8000/v1"
            )
    if secret is None:
        secret = secrets.token_urlsafe(24)
        click.echo(f"no --secret given; generated one for this run: {secret}", err=True)
    config = ProxyConfig(
        records_dir=records_dir,
        secret=secret,
        admin_key=admin_key,
        upstreams=list(upstreams),
        served_model=served_model,
        model_aliases=list(aliases) or None,
        max_body_bytes=int(max_body_mb * 1024 * 1024),
        keepalive_s=keepalive_s,
        upstream_retries=retries,
        upstream_timeout_s=upstream_timeout,
        token_ids=not no_token_ids,
        upstream_api_key=upstream_key,
    )
    try:
        app = create_app(config)
    except OSError as e:
        raise UsageError(
            f"cannot write records to {records_dir}: {e.strerror}", "choose another --records"
        ) from e
    click.echo(
        f"forge-eval proxy on http://{host}:{port} (pid {os.getpid()}) -> {', '.join(upstreams)}; "
        f"records in {records_dir}",
        err=True,
    )
    serve_forever(app, host, port, access_log)


@proxy.command()
@click.argument("records_dir", type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "--out",
    "out_dir",
    default=None,
    type=click.Path(file_okay=False, path_type=Path),
    help="Output directory (default: RECORDS_DIR/parquet).",
)
@click.option("--finished-only", is_flag=True, help="Skip rollouts still running.")
def compact(records_dir: Path, out_dir: Path | None, finished_only: bool) -> None:
    """Write calls.parquet and rollouts.parquet from a proxy's JSONL records."""
    from forge_eval.training.proxy import compact as compact_records

    if not records_dir.is_dir():
        raise UsageError(
            f"no records directory at {records_dir}", "give the --records directory of the proxy"
        )
    result = compact_records(records_dir, out_dir or records_dir / "parquet", finished_only=finished_only)
    click.echo(
        f"{result.n_calls} calls -> {result.calls_path}; {result.n_rollouts} rollouts -> "
        f"{result.rollouts_path}" + (f"; {result.skipped_running} running skipped" if finished_only else "")
    )
