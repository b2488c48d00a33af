"""The serve command: an embedded model in the foreground, as `forge-eval serve-model` and as the process
`EmbeddedModelServer` starts (`python -m forge_eval.models serve`). It lives with the models so that
their own server process needs nothing from the CLI above them."""

from __future__ import annotations

import socket
from pathlib import Path

import click

from forge_eval.models._serve import bind_socket, serve
from forge_eval.models._server import INSPECT_SERVICE, LOCAL_API_KEY
from forge_eval.models._spec import EMBEDDED_MODELS, default_model


def _ready_message(model: str, quiet: bool):
    def on_ready(base_url: str) -> None:
        if quiet:
            return
        service = INSPECT_SERVICE.upper()
        click.echo(f"serving {model} at {base_url} (Ctrl-C to stop)")
        click.echo("point Inspect at it with:")
        click.echo(f"  export {service}_BASE_URL={base_url} {service}_API_KEY={LOCAL_API_KEY}")
        click.echo(f"  inspect eval <task> --model openai-api/{INSPECT_SERVICE}/{model}")
        click.echo(f"or any OpenAI client: base_url={base_url}, model={model}")

    return on_ready


@click.command("serve-model")
@click.option("--port", type=int, default=None, help="Port on 127.0.0.1 (default: a free one).")
@click.option(
    "--model", "model_name", default=None, help="Embedded model: qwen-0.5b (default), qwen-1.5b or smollm2."
)
@click.option(
    "--threads",
    type=click.IntRange(1),
    default=None,
    help="CPU threads for llama.cpp (default: the cores idle at start; more than idle cores slow it down).",
)
@click.option(
    "--request-log",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Append one JSON line per request with the sampling parameters received.",
)
@click.option(
    "--model-path",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="Serve this GGUF file under the model's name instead of the packaged weights.",
)
@click.option(
    "--deterministic",
    is_flag=True,
    help="Same seed, same text whatever else runs: no prompt cache, one request at a time (slower).",
)
@click.option("--verbose", is_flag=True, help="Log each request's llama.cpp timings to stderr.")
@click.option("--fd", type=int, default=None, hidden=True, help="Listen on this inherited socket.")
@click.option("--parent-pid", type=int, default=None, hidden=True, help="Exit when this parent dies.")
def serve_model(
    port: int | None,
    model_name: str | None,
    threads: int | None,
    request_log: Path | None,
    model_path: Path | None,
    deterministic: bool,
    verbose: bool,
    fd: int | None,
    parent_pid: int | None,
) -> None:
    """Serve an embedded model as an OpenAI-compatible API on 127.0.0.1."""
    spec = EMBEDDED_MODELS.get(model_name) if model_name else default_model()
    sock = socket.socket(fileno=fd) if fd is not None else bind_socket(port)
    serve(
        spec,
        sock,
        threads=threads,
        request_log=request_log,
        model_path=model_path,
        on_ready=_ready_message(spec.name, quiet=fd is not None),
        parent_pid=parent_pid,
        deterministic=deterministic,
        verbose=verbose,
    )
