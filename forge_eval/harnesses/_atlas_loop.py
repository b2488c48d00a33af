"""MCP-Atlas's agent loop (harness "atlas-loop"): upstream's own code, run from the pinned tree.

Per sample, as upstream's `mcp_completion_script.py` runs one task against its two services:

- upstream's completion service (`mcp_completion.main:app`: `run_mcp_eval`, every enabled tool each
  turn, at most 20 turns, a tool call whose arguments are not JSON or whose tool cannot be reached fails
  the run with HTTP 500) is served on a local port; its model calls (`litellm.acompletion` in
  `mcp_completion/llm.py`) go as OpenAI chat requests to the sample's recording proxy, whose upstream is
  the run's Inspect model (every call an Inspect `ModelEvent`);
- its tools come from a local stand-in for upstream's agent-environment service (`/list-tools`,
  `/call-tool`, answered as upstream's `agent_environment/main.py` answers: content blocks, or HTTP 500
  with the error) over the benchmark's tools (the real MCP servers in the sandbox);
- upstream's `AsyncMCPTrajectoryGenerator.process_single_task` drives it: its stagger, its per-attempt
  timeout (`CLIENT_TIMEOUT`, 240 s), up to `MAX_RETRY_ATTEMPTS` (3) attempts with its backoff, and its
  answer extraction (`script_model_response`), which becomes `state.output`.

The endpoints upstream reads from its environment (`LLM_BASE_URL`, `LLM_API_KEY`, `MCP_SERVER_URL`, the
script's `SERVER_URL`) are pointed at this sample's services; upstream's results CSV is not written.
"""

from __future__ import annotations

import json
import secrets
import shutil
import tempfile
import time
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any
from uuid import uuid4

from inspect_ai.log import transcript
from inspect_ai.model import ChatMessageUser, ModelOutput, get_model, messages_from_openai
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.tool import Tool, ToolDef, ToolError
from openai import AsyncOpenAI
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from forge_eval._errors import ForgeError
from forge_eval.harnesses._external import _keep_records
from forge_eval.harnesses._harness import Harness
from forge_eval.harnesses._settings import current_settings
from forge_eval.proxy import (
    HttpProxyControl,
    InspectUpstream,
    ProxyConfig,
    create_app,
    create_control_app,
    serve_in_task,
)
from forge_eval.upstream import (
    ATLAS_LOOP_PACKAGE,
    ATLAS_SCRIPT_FILE,
    atlas_import_file,
    atlas_import_package,
    atlas_litellm_shim,
    atlas_private_name,
)

#: upstream v1's turn cap (`RunAgentAPIRequestBody.max_turns`).
MAX_TURNS = 20
#: The OpenAI message fields a chat endpoint takes (upstream's messages also carry `original_message`).
_WIRE_KEYS = ("role", "content", "tool_calls", "tool_call_id", "name")
#: This sample's endpoints, read by upstream's config in place of its environment variables.
_ENDPOINTS: ContextVar[dict[str, str]] = ContextVar("atlas_endpoints")


async def _acompletion(
    *,
    model: str,
    messages: list[dict[str, Any]],
    tools: list[dict[str, Any]] | None = None,
    api_key: str | None = None,
    api_base: str | None = None,
    timeout: float | None = None,
    extra_body: dict[str, Any] | None = None,
    **_: Any,
) -> Any:
    """litellm's OpenAI-compatible call as upstream's loop makes it (one attempt: upstream's retries are
    the whole run's), sent to `api_base`: the sample's proxy."""
    client = AsyncOpenAI(base_url=api_base, api_key=api_key or "-", timeout=timeout, max_retries=0)
    wire = [_wire(m) for m in messages]
    try:
        return await client.chat.completions.create(
            model=model.split("/", 1)[-1],  # litellm strips the provider before the request
            messages=wire,  # type: ignore[arg-type]
            **({"tools": tools} if tools else {}),  # type: ignore[arg-type]
            **({"extra_body": extra_body} if extra_body else {}),
        )
    finally:
        await client.close()


def _wire(message: dict[str, Any]) -> dict[str, Any]:
    """An upstream message as an OpenAI chat message (no content is "": Inspect's reader needs text)."""
    wire = {k: message[k] for k in _WIRE_KEYS if message.get(k) is not None}
    return {**wire, "content": message.get("content") or ""}


class _SampleConfig:
    """Upstream's `config`, with the endpoints of the sample whose context reads it."""

    def __init__(self, upstream: Any) -> None:
        self._upstream = upstream

    def __getattr__(self, name: str) -> Any:
        endpoints = _ENDPOINTS.get({})
        return endpoints[name] if name in endpoints else getattr(self._upstream, name)


@cache
def loop_modules(tree: Path) -> dict[str, ModuleType]:
    """Upstream's `mcp_completion` package of `tree` (imported once per tree), its config per sample."""
    modules = atlas_import_package(
        tree,
        ATLAS_LOOP_PACKAGE,
        atlas_private_name(tree, "mcp_completion"),
        atlas_litellm_shim(_acompletion),
        ("config", "llm", "agent_eval", "mcp_client.sandbox_client", "main"),
    )
    config = _SampleConfig(modules["config"].config)
    for name in ("llm", "agent_eval", "mcp_client.sandbox_client", "main"):
        modules[name].config = config
    return modules


def completion_script(tree: Path, server_url: str) -> ModuleType:
    """Upstream's completion script, one instance per sample (its `SERVER_URL` is a module global)."""
    name = atlas_private_name(tree, f"script_{uuid4().hex[:8]}")
    script = atlas_import_file(tree, ATLAS_SCRIPT_FILE, name, {})
    script.SERVER_URL = server_url
    return script


def environment_app(tools: list[Tool]) -> Starlette:
    """The agent-environment service's two endpoints over Inspect tools, answering as upstream's does."""
    defs = {ToolDef(t).name: ToolDef(t) for t in tools}

    async def list_tools(request: Request) -> JSONResponse:
        listed = [
            {
                "name": d.name,
                "description": d.description,
                "inputSchema": d.parameters.model_dump(exclude_none=True),
            }
            for d in defs.values()
        ]
        return JSONResponse(listed)

    async def call_tool(request: Request) -> JSONResponse:
        body = await request.json()
        name, args = str(body.get("tool_name")), body.get("tool_args") or {}
        try:
            if name not in defs:
                raise ToolError(f"Unknown tool: {name}")
            result = await defs[name].tool(**args)
        except Exception as e:  # the service answers every failure as HTTP 500 with the error
            return JSONResponse({"detail": f"Failed to call tool '{name}': {e}"}, status_code=500)
        return JSONResponse(_content_blocks(result))

    listing = Route("/list-tools", list_tools, methods=["POST"])
    return Starlette(routes=[listing, Route("/call-tool", call_tool, methods=["POST"])])


def _content_blocks(result: Any) -> list[dict[str, Any]]:
    """An Inspect tool result as MCP content blocks (what upstream's service returns)."""
    items = result if isinstance(result, list) else [result]
    blocks: list[dict[str, Any]] = []
    for item in items:
        if isinstance(item, str | int | float | bool):
            blocks.append({"type": "text", "text": str(item)})
        elif getattr(item, "type", None) == "text":
            blocks.append({"type": "text", "text": item.text})
        elif getattr(item, "type", None) == "image":
            header, _, data = str(item.image).partition(",")
            mime = header.removeprefix("data:").split(";")[0] or "image/png"
            blocks.append({"type": "image", "data": data, "mimeType": mime})
        else:
            blocks.append({"type": "text", "text": str(item)})
    return blocks


async def _proxied(state: TaskState, run: Callable[[str, str], Awaitable[None]]) -> None:
    """Run `run(base_url, api_key)` with a recording proxy for this sample (upstream: the run's model)."""
    records = Path(tempfile.mkdtemp(prefix="forge-atlas-records-"))
    rollout_id = f"{state.sample_id}-e{state.epoch}-{uuid4().hex[:8]}"
    try:
        secret = secrets.token_urlsafe(24)
        config = ProxyConfig(records_dir=records, secret=secret, served_model=str(get_model()))
        app = create_app(config, InspectUpstream())
        control = HttpProxyControl.in_process(create_control_app(app), str(config.admin_key))
        async with serve_in_task(app) as proxy_url:
            created = await control.create_rollout(
                {
                    "rollout_id": rollout_id,
                    "task_id": str(state.sample_id),
                    "epoch": state.epoch,
                    "harness": AtlasLoopHarness.name,
                    "mode": "eval",
                }
            )
            await run(f"{proxy_url}{created.base_path}/v1", created.api_key)
            await control.release(rollout_id)
            await control.aclose()
    finally:
        settings = current_settings()
        if settings.records_dir is not None:
            _keep_records(records / rollout_id, settings.records_dir)
        shutil.rmtree(records, ignore_errors=True)


@solver
def atlas_loop(tools: list[Tool], upstream_tree: str | None = None) -> Solver:
    """Upstream's completion script, service and loop on this sample (module doc)."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        tree_text = upstream_tree or state.metadata.get("upstream_tree")
        if not tree_text:
            raise ForgeError("atlas-loop runs MCP-Atlas's own loop from its pinned tree: no tree given")
        tree = Path(tree_text)
        modules = loop_modules(tree)
        names = [ToolDef(t).name for t in tools]
        result: dict[str, Any] = {}

        async def run(base_url: str, api_key: str) -> None:
            async with serve_in_task(environment_app(tools)) as tools_url:
                token = _ENDPOINTS.set(
                    {"LLM_BASE_URL": base_url, "LLM_API_KEY": api_key, "MCP_SERVER_URL": tools_url}
                )
                try:
                    async with serve_in_task(modules["main"].app) as loop_url:
                        result.update(await _drive(completion_script(tree, loop_url), state, names))
                finally:
                    _ENDPOINTS.reset(token)

        started = time.monotonic()
        await _proxied(state, run)
        conversation = json.loads(result.get("raw_conversation_history") or "[]")
        user = [m for m in state.messages if isinstance(m, ChatMessageUser)][:1]
        state.messages = [*user, *await messages_from_openai([_wire(m) for m in conversation])]  # type: ignore[arg-type]
        answer = result.get("script_model_response") or ""
        state.output = ModelOutput.from_content(model=str(get_model()), content=str(answer))
        transcript().info(
            {
                "harness": AtlasLoopHarness.name,
                "attempts": result.get("num_retry"),
                "trajectory_time_s": result.get("trajectory_time"),
                "wall_s": round(time.monotonic() - started, 2),
                "answer_found": bool(answer),
            },
            source=AtlasLoopHarness.name,
        )
        return state

    return solve


async def _drive(script: ModuleType, state: TaskState, tool_names: list[str]) -> dict[str, Any]:
    """Upstream's `process_single_task` on this sample, its results CSV left unwritten."""

    class Generator(script.AsyncMCPTrajectoryGenerator):  # type: ignore[name-defined,misc]
        async def write_result_to_csv(self, result_dict: dict[str, Any], output_file: str) -> None:
            return None  # the result stays in Inspect's log

    row = {
        "TASK": str(state.sample_id),
        "PROMPT": state.input_text,
        "ENABLED_TOOLS": json.dumps(tool_names),
        "TRAJECTORY": "[]",
        "GTFA_CLAIMS": "",
    }
    async with Generator(str(get_model())) as generator:  # upstream formats messages by model name
        return dict(await generator.process_single_task(row, "", 0, 1))


class AtlasLoopHarness(Harness):
    name = "atlas-loop"
    description = "MCP-Atlas v1's own loop, completion service and retries, run from the pinned tree"
    #: Turns per task (upstream v1's cap, part of upstream's request schema).
    max_turns = MAX_TURNS

    def agent(self, *, tools: list[Tool], system_prompt: str, **options: Any) -> Solver:
        """`system_prompt` is not used: upstream's script adds its own only when its environment sets
        USE_SYSTEM_PROMPT_IN_COMPLETION; `upstream_tree` (default: the sample's metadata) is the tree."""
        return atlas_loop(tools, options.get("upstream_tree"))
