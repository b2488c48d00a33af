#!/usr/bin/env bash
# veRL 0.9.1 on CPU, for the training tests marked `verl` (they compare our GRPO numbers with veRL's own
# and unit-test the AgentLoop adapter). Idempotent: does nothing when the pinned versions import.
#
# Order matters: torch 2.13.0 goes in FIRST and on its own. `pip install torch==2.13.0` takes the local
# CPU wheel on the CI machine; if verl were installed first, its unpinned `torch` requirement would pull a
# multi-GB CUDA build. With torch 2.13.0 present, verl's range is satisfied and pip keeps it.
# Not `verl[vllm]`: it pins torch==2.11.0. The extra packages are what `verl.experimental.agent_loop`
# (cachetools fastapi uvicorn pyzmq msgspec) and the V1 trainer utilities (TransferQueue) import; gguf
# and accelerate let transformers turn the SmolLM2 GGUF into torch weights (`ablate credit --policy smollm2`).
set -euo pipefail
PY="${VENV:-.venv}/bin/python"
PIP=("$PY" -m pip --disable-pip-version-check -q install)

if "$PY" - <<'PY' 2>/dev/null; then
import importlib.metadata as m
assert m.version("torch").startswith("2.13.0") and m.version("verl") == "0.9.1"
import cachetools, fastapi, uvicorn, zmq, msgspec, transfer_queue, gguf, accelerate  # noqa: F401
PY
    echo "40-verl: torch 2.13.0 + verl 0.9.1 already installed"
    exit 0
fi

start=$(date +%s)
# Refuse before downloading anything when pip would not take a CPU build of torch (on PyPI alone,
# torch==2.13.0 resolves to a CUDA build of several GB).
report=$(mktemp)
"$PY" -m pip --disable-pip-version-check -q install --dry-run --report "$report" torch==2.13.0
"$PY" - "$report" <<'PY'
import json, sys
torch = [i for i in json.load(open(sys.argv[1]))["install"] if i["metadata"]["name"] == "torch"]
if torch and "+cpu" not in torch[0]["metadata"]["version"]:
    sys.exit(f"40-verl: pip would install torch {torch[0]['metadata']['version']} from "
             f"{torch[0]['download_info']['url']}, not the CPU build; put the torch 2.13.0+cpu wheel on "
             "PIP_FIND_LINKS (this machine kind has it in /opt/wheels) and run again")
PY
rm -f "$report"
"${PIP[@]}" torch==2.13.0
"${PY}" -c 'import torch, sys; v = torch.__version__; sys.exit(0 if v.startswith("2.13.0") and not torch.version.cuda else f"40-verl: expected CPU torch 2.13.0, got {v} (cuda={torch.version.cuda})")'
"${PIP[@]}" "torch==2.13.0" "verl==0.9.1" cachetools fastapi uvicorn pyzmq msgspec "TransferQueue>=0.1.10" "pyarrow>=14" "gguf>=0.10" "accelerate>=1.0"
echo "40-verl: installed torch 2.13.0 (CPU) + verl 0.9.1 in $(( $(date +%s) - start )) s"
