#!/usr/bin/env bash
# The local rollout sandbox (forge_eval.sandbox) runs every harness under bubblewrap and
# bridges its one allowed TCP port to the host through socat over a bind-mounted Unix socket. Both are
# small Debian packages; the Kubernetes backend's tests use the kmock emulator (a pip dev dependency).
# Idempotent: skips apt entirely when both binaries are present.
set -euo pipefail
if command -v bwrap >/dev/null && command -v socat >/dev/null; then
  echo "bubblewrap and socat already installed"
  exit 0
fi
apt-get update -qq
apt-get install -y -qq bubblewrap socat
