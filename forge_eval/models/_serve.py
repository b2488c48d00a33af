"""Run the embedded model server in this process (`forge-eval serve-model` and the child process that
`EmbeddedModelServer` starts): only these import the llama.cpp binding, not the parent."""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Callable
from pathlib import Path

import click
import uvicorn

from forge_eval.models._app import create_app
from forge_eval.models._engine import LlamaEngine
from forge_eval.models._server import INSPECT_SERVICE, LOCAL_API_KEY
from forge_eval.models._socket import bind_socket
from forge_eval.models._spec import EMBEDDED_MODELS, EmbeddedModelSpec, default_model
from forge_eval.models._token_ids import TokenIdEngine, load_tokenizer


def _exit_when_orphaned(parent_pid: int) -> None:
    """Stop this server if the process that started it dies (even by SIGKILL).

    An orphan has nobody to answer, so it exits at once: a graceful uvicorn shutdown would wait for
    an in-flight generation that nobody reads (seen: an orphan decoding on for minutes).
    """

    def watch() -> None:
        while os.getppid() == parent_pid:
            time.sleep(1.0)
        os._exit(0)

    threading.Thread(target=watch, name="forge-parent-watch", daemon=True).start()


def serve(
    spec: EmbeddedModelSpec,
    sock: socket.socket,
    threads: int | None = None,
    request_log: Path | None = None,
    model_path: Path | None = None,
    on_ready: Callable[[str], None] | None = None,
    parent_pid: int | None = None,
    deterministic: bool = False,
    verbose: bool = False,
    token_ids: bool = False,
) -> None:
    """Load `spec`'s weights and serve them on `sock` until interrupted.

    Args:
        spec: The embedded model.
        sock: A bound, listening socket (see `bind_socket`).
        threads: CPU threads for llama.cpp (None: the cores idle now, see `default_threads`).
        request_log: Append one JSON line per chat request here.
        model_path: Serve this GGUF file instead of the spec's packaged weights.
        on_ready: Called with the base URL once the model is loaded.
        parent_pid: Exit when this process is no longer our parent.
        deterministic: Repeatable seeded sampling at the cost of speed (see `create_app`).
        verbose: Let llama.cpp log each request's timings and slot use to stderr.
        token_ids: Answer `return_token_ids` requests with engine token ids (`TokenIdEngine`).
    """
    if parent_pid is not None:
        _exit_when_orphaned(parent_pid)
    weights = model_path or spec.weights_path()
    engine: LlamaEngine | TokenIdEngine = LlamaEngine(
        weights, threads=threads, n_ctx_per_slot=spec.n_ctx_per_slot, verbose=verbose
    )
    if token_ids:
        engine = TokenIdEngine(engine, load_tokenizer(weights))
    app = create_app(engine, spec.name, request_log, deterministic=deterministic)
    host, port = sock.getsockname()[:2]
    if on_ready is not None:
        on_ready(f"http://{host}:{port}/v1")
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off")
    uvicorn.Server(config).run(sockets=[sock])


def serve_command(
    port: int | None,
    model_name: str | None,
    threads: int | None,
    request_log: Path | None,
    model_path: Path | None,
    deterministic: bool,
    token_ids: bool,
    verbose: bool,
    fd: int | None,
    parent_pid: int | None,
) -> None:
    """`forge-eval serve-model` (its options and help: forge_eval/models/_command.py)."""
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
        token_ids=token_ids,
    )


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
