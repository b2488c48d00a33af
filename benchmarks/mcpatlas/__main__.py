"""`python -m forge_eval.benchmarks.mcpatlas install [SERVER ...]`: install the pinned MCP servers that
run offline (default: all of them); `status` lists every default server and why it cannot run here.
scripts/setup.d/45-mcp-servers.sh installs the ones the tests start."""

import sys

from forge_eval._errors import ForgeError
from forge_eval.benchmarks.mcpatlas._servers import DEFAULT_SERVERS, install, server_problem


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in ("install", "status"):
        usage = "usage: python -m forge_eval.benchmarks.mcpatlas install [SERVER ...] | status"
        print(usage, file=sys.stderr)
        return 2
    try:
        if argv[0] == "install":
            install(argv[1:])
        else:
            for name in sorted(DEFAULT_SERVERS):
                print(f"{name}: {server_problem(name, None) or 'runs here'}")
    except ForgeError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
