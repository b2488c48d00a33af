"""`python -m forge_eval.benchmarks.claweval install [TREE]`: build upstream's venv from the pinned tree
(scripts/setup.d/47-claweval-venv.sh runs it for the tests)."""

import sys

from forge_eval._errors import ForgeError
from forge_eval.benchmarks.claweval._upstream import ensure_venv, upstream_tree


def main(argv: list[str]) -> int:
    if not argv or argv[0] != "install" or len(argv) > 2:
        print("usage: python -m forge_eval.benchmarks.claweval install [TREE]", file=sys.stderr)
        return 2
    try:
        tree = upstream_tree(argv[1] if len(argv) > 1 else None)
        python = ensure_venv(tree)
    except ForgeError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    print(f"claweval: upstream's venv at {python.parents[1]} (built from {tree})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
