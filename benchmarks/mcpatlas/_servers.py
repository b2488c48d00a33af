"""MCP-Atlas's servers: the 20 key-free defaults, the paper's 89-task rule, and what can run here.

The 89-task subset (v1 `mcp_completion_script.py`, on unless `--no-filter`): a task is kept iff every
server its reference TRAJECTORY calls is one of the 20 defaults, after two renames.
"""

from __future__ import annotations

from collections.abc import Iterable

from forge_eval.benchmarks.mcpatlas._data import AtlasTask, server_of

DEFAULT_SERVERS = frozenset(
    {
        "arxiv",
        "calculator",
        "cli-mcp-server",
        "clinicaltrialsgov-mcp-server",
        "context7",
        "ddg-search",
        "desktop-commander",
        "fetch",
        "filesystem",
        "git",
        "mcp-code-executor",
        "mcp-server-code-runner",
        "memory",
        "met-museum",
        "open-library",
        "osm-mcp-server",
        "pubmed",
        "weather",
        "whois",
        "wikipedia",
    }
)
#: Default servers that call live web APIs (need internet).
LIVE_API_SERVERS = DEFAULT_SERVERS - {
    "calculator",
    "cli-mcp-server",
    "desktop-commander",
    "filesystem",
    "git",
    "mcp-code-executor",
    "mcp-server-code-runner",
    "memory",
}
#: Offline servers whose tasks read files seeded into the mcp-atlas image (/data), not published.
SEEDED_DATA_SERVERS = frozenset(
    {
        "cli-mcp-server",
        "desktop-commander",
        "filesystem",
        "git",
        "mcp-code-executor",
        "mcp-server-code-runner",
    }
)


def trajectory_servers(task: AtlasTask) -> frozenset[str]:
    """Servers of the reference calls, with upstream's renames (brave, MongoDB)."""
    renamed = []
    for name in task.trajectory_tools:
        if name.startswith("brave_brave_web_search"):
            name = "brave-search_brave_web_search"
        elif name.startswith("MongoDB_"):
            name = "mongodb_" + name[len("MongoDB_") :]
        renamed.append(server_of(name))
    return frozenset(renamed)


def paper_subset(tasks: Iterable[AtlasTask]) -> list[AtlasTask]:
    """The tasks the rule keeps (89 of the 500 public tasks in the paper)."""
    return [t for t in tasks if trajectory_servers(t) <= DEFAULT_SERVERS]


def skip_reason(task: AtlasTask) -> str | None:
    servers = trajectory_servers(task)
    gated = sorted(servers - DEFAULT_SERVERS)
    if gated:
        return f"needs key-gated server(s): {', '.join(gated)}"
    live = sorted(servers & LIVE_API_SERVERS)
    if live:
        return f"needs live web APIs (server(s) {', '.join(live)})"
    seeded = sorted(servers & SEEDED_DATA_SERVERS)
    if seeded:
        return (
            f"reads the files seeded into the mcp-atlas Docker image (server(s) {', '.join(seeded)}), "
            "which are not published"
        )
    return None
