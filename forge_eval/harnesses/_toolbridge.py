"""The benchmark's Inspect tools for a harness that runs its own tools: a command plus instructions.

Codex CLI, Claude Code and OpenClaw bring their own tool loops and a shell; as in the OpenForgeRL paper
(SKILL.md-style instructions + shell for OpenClaw and Codex), the benchmark's tools reach them as one
command, `forge-tool NAME key=value ...`, described in the prompt and in `SKILL.md` in the workspace.
`/schemas` lists the tools for a harness with native tool calls (react in training rollouts).
The command posts to a small HTTP server that runs in the sample (so the tools see the sample's store
and service world) and is the only thing besides the proxy that the sandbox can reach.
"""

import contextlib
import json
from pathlib import Path
from typing import Any

from inspect_ai.tool import Tool, ToolDef, ToolError
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

COMMAND = "forge-tool"

# The command inside the sandbox: stdlib only, so any python3 there runs it. Written by hand because
# it must not import forge-eval (a harness image or sandbox need not have it installed).
_CLI = '''\
"""forge-tool NAME key=value ... | forge-tool NAME '{json}' | forge-tool --list: the task's tools."""
import json, os, sys, urllib.error, urllib.request

URL = os.environ["FORGE_TOOLS_URL"]


def arguments(words):
    if len(words) == 1 and words[0].lstrip().startswith("{"):
        return json.loads(words[0])
    found = {}
    for word in words:
        key, sep, value = word.partition("=")
        if not sep:
            sys.exit(f"forge-tool: expected key=value, got {word!r}")
        try:
            found[key] = json.loads(value) if value[:1] in "[{" else value
        except ValueError:
            found[key] = value
    return found


def main(argv):
    if not argv or argv[0] in ("-h", "--help", "--list"):
        with urllib.request.urlopen(URL + "/instructions", timeout=30) as answer:
            print(answer.read().decode())
        return 0
    try:
        args = arguments(argv[1:])
    except ValueError as e:
        sys.exit(f"forge-tool: the arguments are not valid JSON: {e}")
    request = urllib.request.Request(
        URL + "/tools/" + argv[0], json.dumps(args).encode(), {"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=120) as answer:
            print(json.loads(answer.read())["result"])
            return 0
    except urllib.error.HTTPError as e:
        print("error: " + json.loads(e.read()).get("error", str(e)), file=sys.stderr)
        return 1


sys.exit(main(sys.argv[1:]))
'''


def _coerce(tool: ToolDef, args: dict[str, Any]) -> dict[str, Any]:
    """`key=value` words arrive as strings: convert those the schema types as numbers or booleans."""
    out = {}
    for key, value in args.items():
        param = tool.parameters.properties.get(key)
        kind = param.type if param is not None else None
        if isinstance(value, str) and kind in ("integer", "number", "boolean"):
            with contextlib.suppress(ValueError):  # a bad value stays a string: the tool reports it
                value = json.loads(value.lower() if kind == "boolean" else value)
        out[key] = value
    return out


def _signature(tool: ToolDef) -> str:
    properties = tool.parameters.properties
    required = [p for p in properties if p in tool.parameters.required]
    optional = [p for p in properties if p not in tool.parameters.required]
    return " ".join(required) + (f" [{' '.join(optional)}]" if optional else "")


class ToolBridge:
    """Serves `tools` over HTTP for the `forge-tool` command.

    Args:
        tools: The sample's Inspect tools.
    """

    def __init__(self, tools: list[Tool]) -> None:
        self.tools = {d.name: d for d in (ToolDef(t) for t in tools)}
        self.calls = 0

    def instructions(self) -> str:
        """The SKILL.md text: how to call each tool from the shell."""
        lines = [
            "# Tools of this task",
            f"Run them with your shell: `{COMMAND} NAME key=value ...` (quote values with spaces).",
            "Each prints its JSON result; a failed call prints `error: ...` and exits 1 (retry",
            "temporary errors). The tools, with their required [and optional] arguments:",
        ]
        for name, tool in self.tools.items():
            lines.append(f"- {name} {_signature(tool)}: {tool.description}")
        return "\n".join(lines)

    def schemas(self) -> list[dict[str, Any]]:
        """Each tool's name, description and JSON-Schema parameters: what a harness with native tool
        calls (react) needs to offer them to its model."""
        return [
            {"name": name, "description": tool.description, "parameters": tool.parameters.model_dump()}
            for name, tool in self.tools.items()
        ]

    def install(self, bin_dir: Path, python: str) -> Path:
        """Write the `forge-tool` command into `bin_dir`, run by `python`; returns its path."""
        bin_dir.mkdir(parents=True, exist_ok=True)
        path = bin_dir / COMMAND
        path.write_text(f"#!{python}\n{_CLI}")
        path.chmod(0o755)
        return path

    def app(self) -> Starlette:
        async def instructions(request: Request) -> Response:
            return Response(self.instructions(), media_type="text/markdown")

        async def schemas(request: Request) -> Response:
            return JSONResponse(self.schemas())

        async def call(request: Request) -> Response:
            name = request.path_params["name"]
            tool = self.tools.get(name)
            if tool is None:
                message = f"unknown tool {name!r}; tools: {', '.join(self.tools)}"
                return JSONResponse({"error": message}, status_code=404)
            try:
                args: Any = await request.json()
            except ValueError:
                return JSONResponse({"error": "arguments must be a JSON object"}, status_code=400)
            if not isinstance(args, dict):
                return JSONResponse({"error": "arguments must be a JSON object"}, status_code=400)
            self.calls += 1
            try:
                result = await tool.tool(**_coerce(tool, args))
            except ToolError as e:
                return JSONResponse({"error": e.message}, status_code=422)
            except TypeError as e:  # missing or unexpected arguments
                return JSONResponse({"error": f"bad arguments for {name}: {e}"}, status_code=400)
            text = result if isinstance(result, str) else json.dumps(result, default=str)
            return JSONResponse({"result": text})

        return Starlette(
            routes=[
                Route("/instructions", instructions, methods=["GET"]),
                Route("/schemas", schemas, methods=["GET"]),
                Route("/tools/{name}", call, methods=["POST"]),
            ]
        )
