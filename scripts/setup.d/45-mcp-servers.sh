#!/usr/bin/env bash
# The real MCP servers the MCP-Atlas tests start (calculator, cli-mcp-server, filesystem,
# mcp-server-code-runner) at upstream's pins: PyPI servers into their own venv (.forge-cache/mcp-venv), npm
# servers into the harness npm cache. The pins live in forge_eval/benchmarks/mcpatlas/_servers.py; the
# install is idempotent (installed pins are skipped).
set -euo pipefail
cd "$(dirname "$0")/../.."
"${VENV:-.venv}/bin/python" -m forge_eval.benchmarks.mcpatlas install \
  calculator cli-mcp-server filesystem mcp-server-code-runner
