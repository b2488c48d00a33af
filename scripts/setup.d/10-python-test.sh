#!/usr/bin/env bash
# Python packages only the tests need beyond the [dev] extra.
set -euo pipefail
"${VENV:-.venv}/bin/python" -m pip --disable-pip-version-check -q install -e '.[dev]'
