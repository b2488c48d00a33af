#!/usr/bin/env bash
# The desktop the OSWorld `local` provider drives (tests/osworld): an Xvfb display with openbox, xdotool for
# input, the apps of OSWorld's runnable domains (LibreOffice with the GTK3 VCL plugin so AT-SPI sees it, GIMP,
# VLC, Thunderbird), the AT-SPI bus + pyatspi (Debian's python3 walks the accessibility tree), bubblewrap for
# the optional sandbox, and OSWorld's own evaluators (`desktop-env`, pinned, --no-deps + what its getters
# and metrics import) into the venv. Test-only: `make run` needs none of it. Idempotent: skips what is there.
set -euo pipefail
. "$(dirname "$0")/_apt.bash"
cd "$(dirname "$0")/../.."
VENV="${VENV:-.venv}"

APT_PACKAGES=(
  xvfb xdotool openbox x11-utils x11-xserver-utils wmctrl imagemagick dbus dbus-x11 bubblewrap
  at-spi2-core python3-pyatspi python3-gi gir1.2-atspi-2.0 python3-xlib python3-pil python3-tk xdg-utils procps
  libreoffice-calc libreoffice-impress libreoffice-writer libreoffice-gtk3
  gimp vlc thunderbird fonts-dejavu-core fonts-liberation2 passwd
)
apt_install_missing desktop "${APT_PACKAGES[@]}"

# OSWorld's evaluators (desktop-env --no-deps + the `osworld` extra) and the desktop's pyautogui.
SITE="${FORGE_CACHE_DIR:-$HOME/.cache/forge-eval}/osworld-desktop-site"
if "$VENV/bin/python" -c 'import desktop_env, openpyxl, pptx, docx, cv2, skimage, formulas, gymnasium' 2>/dev/null \
    && [[ -d "$SITE/pyautogui" ]]; then
  echo "OSWorld checkers already installed"
else
  "$VENV/bin/python" -m forge_eval.benchmarks.osworld.install --quiet
fi
