"""`python -m forge_eval.benchmarks.claweval install [TREE]`: build upstream's venv from the pinned tree
(scripts/setup.d/47-claweval-venv.sh runs it for the tests); `traces RUN_DIR OUT`: a run's traces in
upstream's layout, for its `score_summary.py`."""

import sys
from pathlib import Path

from forge_eval._errors import ForgeError
from forge_eval.benchmarks.claweval._traces import export_traces
from forge_eval.benchmarks.claweval._upstream import ensure_venv, upstream_tree

USAGE = "usage: python -m forge_eval.benchmarks.claweval install [TREE] | traces RUN_DIR OUT"


def main(argv: list[str]) -> int:
    valid = (argv[:1] == ["install"] and len(argv) <= 2) or (argv[:1] == ["traces"] and len(argv) == 3)
    if not valid:
        print(USAGE, file=sys.stderr)
        return 2
    try:
        if argv[0] == "traces":
            folders = export_traces(Path(argv[1]), Path(argv[2]))
            print(f"claweval: traces in {', '.join(map(str, folders))} (one folder per seed); "
                  f"upstream's summary: python score_summary.py {argv[2]}")
            return 0
        tree = upstream_tree(argv[1] if len(argv) > 1 else None)
        python = ensure_venv(tree)
    except ForgeError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    print(f"claweval: upstream's venv at {python.parents[1]} (built from {tree})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
