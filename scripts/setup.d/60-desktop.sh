#!/usr/bin/env bash
# The desktop the OSWorld `local` provider drives (tests/benchmarks/osworld): an Xvfb display with openbox,
# xdotool for input, the apps of OSWorld's runnable domains (LibreOffice with the GTK3 VCL plugin so AT-SPI sees it, GIMP,
# VLC, Thunderbird), the AT-SPI bus + pyatspi (Debian's python3 walks the accessibility tree), bubblewrap (the
# desktop's sandbox), what the OSWorld tree's in-VM server `desktop_env/server/main.py` imports in the
# desktop's python3 (Flask, requests, lxml, numpy, python3-xlib, Pillow, pyatspi from apt; pyautogui from
# PyPI) and gnome-screenshot (pyautogui's screenshots go through it, as in OSWorld's Ubuntu image), what
# OSWorld's getters, metrics and baseline agent import into the venv (their code, and the server's, is read
# from the pinned OSWorld tree at run time), GNOME's pieces without gnome-shell (gnome-terminal, nautilus,
# GSettings on dconf with the schemas OSWorld's checkers read: desktop, settings daemon, shell) and the
# programs OSWorld's sudo steps install as root (sysstat, xsel; the box's root cannot: the host's /usr is
# read-only there), bc (a gsettings checker's arithmetic). Test-only: `make run` needs none of it.
# Idempotent: installs only what is missing.
set -euo pipefail
. "$(dirname "$0")/_apt.bash"
cd "$(dirname "$0")/../.."
VENV="${VENV:-.venv}"

APT_PACKAGES=(
  xvfb xdotool openbox x11-utils x11-xserver-utils wmctrl imagemagick dbus dbus-x11 bubblewrap
  at-spi2-core python3-pyatspi python3-gi gir1.2-atspi-2.0 python3-xlib python3-pil python3-tk xdg-utils procps
  python3-flask python3-requests python3-lxml python3-numpy gnome-screenshot
  libreoffice-calc libreoffice-impress libreoffice-writer libreoffice-gtk3
  gimp vlc thunderbird fonts-dejavu-core fonts-liberation2 passwd
  gnome-terminal nautilus dconf-gsettings-backend dconf-service dconf-cli libglib2.0-bin
  gsettings-desktop-schemas gnome-settings-daemon-common gnome-shell-common
  sysstat xsel bc
  chromium socat  # OSWorld's Chrome tasks (benchmarks/osworld/_chrome.py); also set up by 50/35 for others
)
apt_install_missing desktop "${APT_PACKAGES[@]}"
# The container provider's image (benchmarks/osworld/docker/Dockerfile) runs this script for the same
# packages; the desktop's Python packages reach each container with its tools folder.
if [[ "${1:-}" == --apt-only ]]; then exit 0; fi

# The `osworld` extra and the desktop's packages; the installer checks what is there and installs only what
# is missing.
"$VENV/bin/python" -m forge_eval.benchmarks.osworld.install --quiet
