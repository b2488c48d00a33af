#!/usr/bin/env bash
# The real MCP servers the MCP-Atlas tests start (calculator, cli-mcp-server, filesystem,
# mcp-server-code-runner, and the web-API servers arxiv, ddg-search, fetch, context7, open-library, which
# list their tools without the web) at upstream's pins: PyPI servers into their own venvs (.forge-cache/
# mcp-venv, and mcp-venv-<server> for each web server), npm servers into the harness npm cache. The pins
# live in forge_eval/benchmarks/mcpatlas/_servers.py; the install is idempotent (installed pins are
# skipped). Not here: osm-mcp-server (its pin needs a python3.13 on PATH), clinicaltrialsgov-mcp-server,
# met-museum and whois (the npm registry reachable from CI answers 404 for their packages), and pubmed,
# weather and wikipedia (upstream installs them from GitHub: `install <server>` on an online machine).
set -euo pipefail
cd "$(dirname "$0")/../.."
"${VENV:-.venv}/bin/python" -m forge_eval.benchmarks.mcpatlas install \
  calculator cli-mcp-server filesystem mcp-server-code-runner arxiv ddg-search fetch context7 open-library
