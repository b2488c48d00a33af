"""What `forge-eval proxy serve` and `proxy compact` do."""

import gc
import ipaddress
import os
import secrets
from pathlib import Path

import click

from forge_eval._errors import UsageError
from forge_eval.proxy import (
    Listener,
    ProxyConfig,
    create_app,
    create_control_app,
    serve_forever,
)
from forge_eval.proxy import compact as compact_records


def serve(
    upstreams: tuple[str, ...],
    port: int,
    host: str,
    control_port: int,
    control_socket: Path | None,
    records_dir: Path,
    durability: str,
    secret_file: Path | None,
    admin_key_file: Path | None,
    argv_secret: str | None,
    argv_admin_key: str | None,
    served_model: str | None,
    aliases: tuple[str, ...],
    max_body_mb: float,
    body_timeout_s: float,
    keepalive_s: float,
    retries: int,
    upstream_timeout: float,
    no_token_ids: bool,
    upstream_key: str | None,
    access_log: bool,
) -> None:
    """`forge-eval proxy serve` (its options and help: forge_eval/_cli/proxy.py)."""
    for flag, given in (("--secret", argv_secret), ("--admin-key", argv_admin_key)):
        if given is not None:
            variable = "FORGE_PROXY_SECRET" if flag == "--secret" else "FORGE_PROXY_ADMIN_KEY"
            raise UsageError(
                f"{flag} on the command line is readable by every local process (/proc/PID/cmdline)",
                f"set {variable} or use {flag}-file",
            )
    for url in upstreams:
        if not url.startswith(("http://", "https://")):
            raise UsageError(
                f"--upstream must be an http(s) URL, got {url!r}", "e.g. --upstream http://127.0.0.1:8000/v1"
            )
    if not _loopback(host):
        click.echo(
            f"warning: --host {host} lets other machines reach the data plane; rollout keys are its only "
            "protection (the control plane stays on 127.0.0.1)",
            err=True,
        )
    try:
        records_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        secret = _credential("FORGE_PROXY_SECRET", secret_file, records_dir / ".secret")
        admin_key = _credential("FORGE_PROXY_ADMIN_KEY", admin_key_file, records_dir / ".admin-key")
    except OSError as e:
        raise UsageError(
            f"cannot use records directory {records_dir}: {e}", "choose another --records"
        ) from e
    if admin_key == secret:
        raise UsageError("the admin key and the secret are the same", "give the control plane its own token")
    config = ProxyConfig(
        records_dir=records_dir,
        durability=durability,  # type: ignore[arg-type]  # click.Choice of the same names
        secret=secret,
        admin_key=admin_key,
        upstreams=list(upstreams),
        served_model=served_model,
        model_aliases=list(aliases) or None,
        max_body_bytes=int(max_body_mb * 1024 * 1024),
        body_timeout_s=body_timeout_s,
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
    control_listener = Listener(port=control_port, uds=control_socket)
    where = f"unix:{control_socket}" if control_socket else f"http://127.0.0.1:{control_port}"
    key_source = (
        "FORGE_PROXY_ADMIN_KEY"
        if os.environ.get("FORGE_PROXY_ADMIN_KEY")
        else str(admin_key_file or records_dir / ".admin-key")
    )
    click.echo(
        f"forge-eval proxy (pid {os.getpid()}): harnesses on http://{host}:{port} -> {', '.join(upstreams)}; "
        f"control plane on {where} (admin key: {key_source}); records in {records_dir} ({durability})",
        err=True,
    )
    _tune_gc()
    try:
        serve_forever(app, Listener(host, port), create_control_app(app), control_listener, access_log)
    except OSError as e:
        raise UsageError(
            f"cannot listen on {host}:{port} or {where}: {e.strerror or e}",
            "choose free ports with --port / --control-port (or stop the other proxy)",
        ) from e


def _tune_gc() -> None:
    """The process is the proxy's alone: its start-up objects (modules, schemas) are frozen out of the
    cyclic collector's view, and a young-generation pass runs every 20,000 allocations rather than 700.
    An upstream answer with logprobs allocates ~1,000 containers, so at the default every call paid one
    pass over the objects of all calls in flight (~25% of the proxy's CPU, measured with perf)."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(20_000, 20, 50)


def _loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


def _credential(variable: str, file: Path | None, generated: Path) -> str:
    """A secret from the environment, else a file, else generated once into `generated` (0600)."""
    value = os.environ.get(variable)
    if not value and file is not None:
        value = file.read_text().strip()
        if not value:
            raise UsageError(f"{file} is empty", "write the token into it, or let the proxy make one")
    if not value and generated.exists():
        value = generated.read_text().strip()
    if not value:
        value = secrets.token_urlsafe(32)
        fd = os.open(generated, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(value + "\n")
    return value


def compact(records_dir: Path, out_dir: Path | None, finished_only: bool) -> None:
    """`forge-eval proxy compact` (its options and help: forge_eval/_cli/proxy.py)."""
    if not records_dir.is_dir():
        raise UsageError(
            f"no records directory at {records_dir}", "give the --records directory of the proxy"
        )
    result = compact_records(records_dir, out_dir or records_dir / "parquet", finished_only=finished_only)
    click.echo(
        f"{result.n_calls} calls -> {result.calls_path}; {result.n_rollouts} rollouts -> "
        f"{result.rollouts_path}"
        + (f"; {result.skipped_running} running skipped" if finished_only else "")
        + (f"; {result.torn_lines} torn last line(s) skipped" if result.torn_lines else "")
    )
