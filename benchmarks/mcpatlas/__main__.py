"""`python -m forge_eval.benchmarks.mcpatlas install [SERVER ...]`: install the pinned MCP servers
(default: every one that has a package; those from a git URL only online); `status [--data-dir DIR]`:
every default server and why it cannot run here (with the seeded /data of the pinned tree; online or
offline by the web benchmarks' probe), and the census of the tasks: which run here, which are skipped
and why. scripts/setup.d/45-mcp-servers.sh installs the servers the tests start."""

import sys

from forge_eval._errors import ForgeError
from forge_eval.benchmarks.mcpatlas._data import task_file, upstream_tree
from forge_eval.benchmarks.mcpatlas._servers import DEFAULT_SERVERS, install, server_problem
from forge_eval.benchmarks.mcpatlas._task import seeded_data, select_tasks

USAGE = "usage: python -m forge_eval.benchmarks.mcpatlas install [SERVER ...] | status [--data-dir DIR]"


def status(data_dir: str | None) -> None:
    try:
        path = task_file(data_dir)
    except ForgeError as e:
        print(f"tasks: not here ({e}); the servers are judged without seeded data")
        path, data = None, None
    else:
        try:
            data = seeded_data(upstream_tree(path))
        except ForgeError:
            data = None
    print(f"seeded /data: {data or 'none (the pinned tree is not here)'}")
    for name in sorted(DEFAULT_SERVERS):
        print(f"{name}: {server_problem(name, data) or 'runs here'}")
    if path is None:
        return
    selection = select_tasks(data_dir, subset="all")
    runnable = [str(s.id) for s in selection.samples]
    print(f"tasks ({path}): {len(runnable)} of {selection.n_total} run here")
    for task_id in runnable:
        print(f"  {task_id}: runs")
    for task_id, reason in selection.skipped.items():
        print(f"  {task_id}: skipped: {reason}")


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in ("install", "status"):
        print(USAGE, file=sys.stderr)
        return 2
    try:
        if argv[0] == "install":
            install(argv[1:])
        elif len(argv) == 1 or (len(argv) == 3 and argv[1] == "--data-dir"):
            status(argv[2] if len(argv) == 3 else None)
        else:
            print(USAGE, file=sys.stderr)
            return 2
    except ForgeError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
