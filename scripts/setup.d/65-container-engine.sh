#!/usr/bin/env bash
# The OSWorld container provider's engine (tests/benchmarks/osworld/test_container.py): Debian's docker.io,
# its daemon started when none answers, a Debian 12 base image made by debootstrap and imported (no
# container registry is reachable from forge-eval's CI), and the desktop image built on it (minutes, once:
# the engine keeps it under /var/lib/docker, and the provider rebuilds only when the Dockerfile or the
# desktop's package list changes). The daemon leaves the host's network alone: no iptables rules, no
# bridge, no IP forwarding or masquerading, no userland proxy, no TCP socket (only root's
# /var/run/docker.sock); the desktop containers run with --network none. Idempotent: installs, starts and
# builds only what is missing. `--engine-only`: no images (the tests' fixture, which starts the daemon).
set -euo pipefail
. "$(dirname "$0")/_apt.bash"
cd "$(dirname "$0")/../.."
VENV="${VENV:-.venv}"
BASE=localhost/forge-eval-debian:bookworm
LOG=/var/log/forge-dockerd.log

apt_install_missing container-engine docker.io debootstrap

if ! docker info >/dev/null 2>&1; then
  echo "starting dockerd (log: $LOG)"
  setsid dockerd --iptables=false --ip-forward=false --ip-masq=false --bridge=none --userland-proxy=false \
    --data-root /var/lib/docker </dev/null >>"$LOG" 2>&1 &
  for _ in $(seq 150); do
    docker info >/dev/null 2>&1 && break
    sleep 0.2
  done
  docker info >/dev/null || { echo "dockerd did not start; the end of $LOG:" >&2; tail -5 "$LOG" >&2; exit 1; }
fi
if [[ "${1:-}" == --engine-only ]]; then exit 0; fi

if ! docker image inspect "$BASE" >/dev/null 2>&1; then
  root=$(mktemp -d /var/tmp/forge-debootstrap.XXXXXX)
  trap 'rm -rf "$root"' EXIT
  echo "making the Debian 12 base image $BASE with debootstrap"
  debootstrap --variant=minbase bookworm "$root" http://deb.debian.org/debian >/dev/null
  # the sources of Debian's own bookworm image: the point release, its updates and security fixes
  rm -f "$root/etc/apt/sources.list"
  cat >"$root/etc/apt/sources.list.d/debian.sources" <<'EOF'
Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://deb.debian.org/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
  rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
  tar --numeric-owner -C "$root" -c . | docker import --change 'CMD ["bash"]' - "$BASE" >/dev/null
fi

"$VENV/bin/python" -m forge_eval.benchmarks.osworld.install --image docker
