"""The serve command's interface: an embedded model in the foreground, as `forge-eval serve-model` and as
the process `EmbeddedModelServer` starts (`python -m forge_eval.models serve`). It lives with the models
so that their own server process needs nothing from the CLI above them; its body, in `_serve`, is
imported only when it runs (the llama.cpp binding stays out of `--help` and of the parent process)."""

from __future__ import annotations

from pathlib import Path

import click

from forge_eval._lazy import lazy_command


@lazy_command("forge_eval.models._serve:serve_command", "serve-model")
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
@click.option(
    "--token-ids",
    is_flag=True,
    help="Answer return_token_ids requests like vLLM: the prompt rendered with the model's chat template "
    "and evaluated as token ids, the ids returned (needs transformers and gguf; start-up takes longer).",
)
@click.option("--verbose", is_flag=True, help="Log each request's llama.cpp timings to stderr.")
@click.option("--fd", type=int, default=None, hidden=True, help="Listen on this inherited socket.")
@click.option("--parent-pid", type=int, default=None, hidden=True, help="Exit when this parent dies.")
def serve_model() -> None:
    """Serve an embedded model as an OpenAI-compatible API on 127.0.0.1."""
