#!/usr/bin/env bash
# Claw-Eval's own venv (upstream's requirements.txt + requirements-sandbox-server.txt, from PyPI), built
# from the pinned tree the tests use (../shared/upstream or $FORGE_UPSTREAM_TREES) into
# ~/.cache/forge-eval/claweval/venv (or $FORGE_CLAWEVAL_VENV). Idempotent: a stamp in the venv holds the
# hash of the requirement files and the Python version; a matching venv is kept as it is.
set -euo pipefail
cd "$(dirname "$0")/../.."
tree="${FORGE_UPSTREAM_TREES:-../shared/upstream}/claw-eval+claw-eval@9365e1a"
if [ ! -d "$tree" ]; then
  echo "claweval: no pinned tree at $tree; its venv is built on first use"
  exit 0
fi
"${VENV:-.venv}/bin/python" -m forge_eval.benchmarks.claweval install "$tree"
