#!/usr/bin/env bash
# The local rollout sandbox (forge_eval.sandbox) runs every harness under bubblewrap as an unprivileged user
# (setpriv, from util-linux, drops to it) and bridges its allowed TCP ports to the host through socat over
# bind-mounted Unix sockets. All are Debian packages; the Kubernetes backend's tests use the kmock emulator
# (a pip dev dependency). Idempotent: installs only what dpkg does not have yet.
set -euo pipefail
. "$(dirname "$0")/_apt.bash"
apt_install_missing sandbox bubblewrap socat util-linux
