"""The MCP-Atlas Inspect task: runnable tasks, their real MCP servers over stdio, the harness (default:
upstream's own loop, `atlas-loop`, which reads upstream's tree from the sample's `upstream_tree`), and
upstream's claim judge (`atlas_scorer`).

Each sample gets a fresh copy of the seeded data (servers such as memory write to it) and its own
server processes, started through Inspect's MCP client, each in the bubblewrap sandbox as the sample's
unprivileged user with that copy at /data as its only writable path (`AtlasServer.sandbox_spec`); the
servers that call live web APIs (run only online) go out through the sample's egress gate, the web
benchmarks' SOCKS5/HTTP CONNECT proxy that admits public addresses only.
Tool names follow upstream (`<server>_<tool>`); only the task's ENABLED_TOOLS are offered. Enabled
distractor tools whose servers cannot run here are left out (recorded in the sample metadata as
`left_out_tools`), a difference from the official setup.
"""

from __future__ import annotations

import shutil
import tempfile
from contextlib import AsyncExitStack
from pathlib import Path

from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.model import GenerateConfig
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.tool import Tool, ToolDef, mcp_connection, mcp_server_stdio, mcp_tools

from forge_eval._errors import ForgeError, UsageError
from forge_eval.benchmarks._selection import Selection, select
from forge_eval.benchmarks._task import benchmark_task
from forge_eval.benchmarks.mcpatlas._data import AtlasTask, load_file, task_file, upstream_tree
from forge_eval.benchmarks.mcpatlas._scorer import atlas_scorer
from forge_eval.benchmarks.mcpatlas._servers import (
    SERVERS,
    AtlasServer,
    paper_subset,
    runnable_servers,
    skip_reason,
)
from forge_eval.benchmarks.web import BrowserConfig, EgressGate, NetworkPolicy
from forge_eval.harnesses import Harness
from forge_eval.sandbox import sandbox_user, sandboxed_command

DEFAULT_HARNESS = "atlas-loop"
#: Where upstream's image gets its /data from, in the tree.
SEEDED_DATA = "services/agent-environment/data"
#: A safety net only: upstream's script bounds a task itself (3 attempts of at most 240 s each, its
#: backoff and stagger between them); this is that much plus a minute.
TIME_LIMIT_S = 3 * 240 + 60
#: How long the egress gate waits for a web server's connection to a public address.
CONNECT_TIMEOUT_S = 30.0


def seeded_data(tree: Path | None, seed_dir: str | None = None) -> Path | None:
    """The files upstream's image holds in /data: `seed_dir`, else `services/agent-environment/data` of
    the pinned tree; None when neither is here."""
    if seed_dir:
        candidate = Path(seed_dir).expanduser()
        if not candidate.is_dir():
            raise UsageError(f"seed_dir {candidate} is not a directory", hint="point it at a copy of /data")
        return candidate.resolve()
    candidate = tree / SEEDED_DATA if tree is not None else None
    return candidate.resolve() if candidate is not None and candidate.is_dir() else None


def to_sample(spec: AtlasTask, data: Path | None, tree: Path | None) -> Sample:
    servers = [s.name for s in runnable_servers(spec, data)]
    return Sample(
        id=spec.task_id,
        input=spec.prompt,
        metadata={
            "gtfa_claims": spec.gtfa_claims,
            "upstream_tree": str(tree) if tree else None,
            "servers": servers,
            "enabled_tools": list(spec.enabled_tools),
            "left_out_tools": [t for t in spec.enabled_tools if t.split("_", 1)[0] not in servers],
            "seeded_data": str(data) if data else None,
        },
    )


def select_tasks(
    data_dir: Path | str | None = None, subset: str = "paper", seed_dir: str | None = None
) -> Selection:
    """The tasks of a subset (paper: the 89-task rule; all), each runnable when every server of its
    reference trajectory runs here with the run's seeded data, else skipped with each blocking server."""
    path = task_file(data_dir)
    try:
        tree: Path | None = upstream_tree(path)
    except ForgeError:
        tree = None  # offline without the tree: the tasks needing its seeded data are skipped, say why
    data = seeded_data(tree, seed_dir)
    tasks = load_file(path)
    paper = {t.task_id for t in paper_subset(tasks)}
    chosen = select(
        tasks,
        subset=subset,
        what="MCP-Atlas",
        id_of=lambda t: t.task_id,
        subsets={"paper": lambda t: t.task_id in paper},
    )
    return Selection.of(
        chosen,
        sample=lambda t: to_sample(t, data, tree),
        reason=lambda t: skip_reason(t, data),
        id_of=lambda t: t.task_id,
        hint="tasks whose reference servers all run offline (calculator, cli-mcp-server, filesystem, memory, "
        "mcp-server-code-runner, git) need the seeded data: --data-dir <upstream repository root>; the "
        "web-API servers' tasks run online",
    )


def named_tools(server: str, tools: list[Tool], enabled: set[str]) -> list[Tool]:
    """The server's tools renamed `<server>_<tool>` as upstream offers them, only the enabled ones."""
    renamed = [ToolDef(t, name=f"{server}_{ToolDef(t).name}") for t in tools]
    return [d.as_tool() for d in renamed if d.name in enabled]


@solver
def atlas_agent(harness: Harness) -> Solver:
    """Start the sample's servers on a fresh copy of the seeded data and run the harness with their tools."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        enabled = set(state.metadata["enabled_tools"])
        with tempfile.TemporaryDirectory(prefix="mcpatlas-data-") as scratch, sandbox_user() as user:
            data = Path(scratch) / "data"
            if state.metadata["seeded_data"]:
                shutil.copytree(state.metadata["seeded_data"], data, symlinks=True)
            else:
                data.mkdir()
            sources = {}
            async with AsyncExitStack() as sandboxes:  # closed after the servers have exited
                opened = await open_egress(sandboxes, [SERVERS.get(n) for n in state.metadata["servers"]])
                egress = opened[1] if opened else None
                for name in state.metadata["servers"]:
                    spec = SERVERS.get(name).sandbox_spec(data, user, egress)
                    command = await sandboxes.enter_async_context(await sandboxed_command(spec))
                    argv = command.argv
                    server = mcp_server_stdio(name=name, command=argv[0], args=argv[1:], env=command.env)
                    sources[name] = mcp_tools(server)
                async with mcp_connection(list(sources.values())):
                    tools = [
                        tool
                        for name, source in sources.items()
                        for tool in named_tools(name, await source.tools(), enabled)
                    ]
                    # atlas-loop finds upstream's tree in the sample's metadata (`upstream_tree`)
                    return await harness.solver(tools=tools, system_prompt="")(state, generate)

    return solve


async def open_egress(stack: AsyncExitStack, servers: list[AtlasServer]) -> tuple[EgressGate, str] | None:
    """The sample's egress gate and its host:port when one of its servers calls the web, closed with
    `stack`."""
    if not any(s.web for s in servers):
        return None
    gate = EgressGate(NetworkPolicy(BrowserConfig(offline=False)), CONNECT_TIMEOUT_S)
    url = await gate.start()
    stack.push_async_callback(gate.close)
    return gate, url.removeprefix("socks5://")


@task
def mcpatlas(
    seed: int = 0,
    harness: str = DEFAULT_HARNESS,
    subset: str = "paper",
    data_dir: str | None = None,
    seed_dir: str | None = None,
    max_tokens: int | None = None,
) -> Task:
    """MCP-Atlas (scaleapi/mcp-atlas v1 @ b290e67): the tasks whose MCP servers run here.

    Args:
        seed: Sampling seed passed to the model.
        harness: Harness name (default: MCP-Atlas's own loop, "atlas-loop").
        subset: paper (the 89-task rule) or all.
        data_dir: The task CSV/parquet, its folder, or the upstream repository root.
        seed_dir: The files of the image's /data (default: services/agent-environment/data upstream).
        max_tokens: Most tokens per model reply (None = the model's default, as upstream).
    """
    selection = select_tasks(data_dir, subset, seed_dir)
    if selection.samples:
        upstream_tree(task_file(data_dir))  # upstream's loop and judge run from it: say so if it is missing
    return benchmark_task(
        "mcpatlas",
        selection,
        seed=seed,
        harness=harness,
        agent=atlas_agent,
        scorer=atlas_scorer(),
        config=GenerateConfig(max_tokens=max_tokens),
        time_limit=TIME_LIMIT_S,
    )
