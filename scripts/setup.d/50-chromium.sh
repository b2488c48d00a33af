#!/usr/bin/env bash
# The browser the web benchmarks (weblab, WebVoyager, Online-Mind2Web) and the report tests drive: Debian's
# Chromium and its headless shell (Playwright's own browser download is not reachable from CI), fonts so pages
# and screenshots render text, tesseract for the text-only judge's OCR, and the `web` extra (Playwright's Python
# driver, python-multipart for the sites' forms, backoff for the judges' upstream code) in the venv.
# The browser runs unprivileged (benchmarks/web/_launch.py): offline in a bubblewrap sandbox, online dropped to
# its uid by setpriv (util-linux).
# Test-only: `make run` needs no browser.
# Idempotent: skips apt and pip when everything is present.
set -euo pipefail
. "$(dirname "$0")/_apt.bash"
cd "$(dirname "$0")/../.."
VENV="${VENV:-.venv}"

APT_PACKAGES=(chromium chromium-headless-shell fonts-dejavu-core fonts-liberation2 tesseract-ocr tesseract-ocr-eng util-linux bubblewrap)
apt_install_missing browser "${APT_PACKAGES[@]}"

if "$VENV/bin/python" -c "import playwright, multipart, backoff" 2>/dev/null; then
  echo "playwright already installed"
else
  "$VENV/bin/python" -m pip install --disable-pip-version-check -q 'playwright>=1.44' 'python-multipart>=0.0.9' 'backoff>=2.2'
fi
