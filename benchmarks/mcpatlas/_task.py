"""The MCP-Atlas Inspect task: runnable tasks, their real MCP servers over stdio, the loop, claim scoring.

Each sample gets a fresh copy of the seeded data (servers such as memory write to it) and its own
server processes, started through Inspect's MCP client, each in the bubblewrap sandbox as the sample's
unprivileged user with that copy at /data as its only writable path (`AtlasServer.sandbox_spec`).
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
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessageAssistant, GenerateConfig
from inspect_ai.scorer import Score, Scorer, Target, mean, scorer, stderr
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.tool import Tool, ToolDef, mcp_connection, mcp_server_stdio, mcp_tools

from forge_eval._errors import ForgeError, UsageError
from forge_eval.benchmarks._judge import Judge, ModelJudge
from forge_eval.benchmarks.mcpatlas._claims import judge_claims
from forge_eval.benchmarks.mcpatlas._data import AtlasTask, load_file, task_file
from forge_eval.benchmarks.mcpatlas._judge import OFFICIAL_JUDGE, PROMPT_SHA256
from forge_eval.benchmarks.mcpatlas._loop import MAX_TURNS
from forge_eval.benchmarks.mcpatlas._scoring import PASS_THRESHOLD, passed
from forge_eval.benchmarks.mcpatlas._servers import (
    SERVERS,
    paper_subset,
    runnable_servers,
    skip_reason,
)
from forge_eval.harnesses import HARNESSES
from forge_eval.sandbox import sandbox_user, sandboxed_command

DEFAULT_HARNESS = "atlas-loop"
SUBSETS = ("paper", "all")
#: v2's per-task limit (v1 has none besides the 20 turns).
TIME_LIMIT_S = 1800


def seeded_data(root: Path, seed_dir: str | None = None) -> Path | None:
    """The files upstream's image holds in /data: `seed_dir`, else `services/agent-environment/data`
    beside the task folder of an upstream checkout; None when absent."""
    candidate = Path(seed_dir).expanduser() if seed_dir else root.parent / "agent-environment" / "data"
    if seed_dir and not candidate.is_dir():
        raise UsageError(f"seed_dir {candidate} is not a directory", hint="point it at a copy of /data")
    return candidate.resolve() if candidate.is_dir() else None


def select_tasks(data_dir: Path | str | None, subset: str = "paper") -> list[AtlasTask]:
    if subset not in SUBSETS:
        raise UsageError(f"unknown MCP-Atlas subset '{subset}'", hint=f"use one of: {', '.join(SUBSETS)}")
    tasks = load_file(task_file(data_dir))
    return paper_subset(tasks) if subset == "paper" else list(tasks)


def data_paths(data_dir: Path | str | None, seed_dir: str | None = None) -> tuple[Path, Path | None]:
    """The task file and the seeded data of a run."""
    path = task_file(data_dir)
    return path, seeded_data(path.parent, seed_dir)


def skipped_tasks(
    data_dir: Path | str | None, subset: str = "paper", seed_dir: str | None = None
) -> dict[str, str]:
    _, data = data_paths(data_dir, seed_dir)
    return {t.task_id: r for t in select_tasks(data_dir, subset) if (r := skip_reason(t, data))}


def to_sample(spec: AtlasTask, data: Path | None) -> Sample:
    servers = [s.name for s in runnable_servers(spec, data)]
    return Sample(
        id=spec.task_id,
        input=spec.prompt,
        metadata={
            "claims": list(spec.claims),
            "servers": servers,
            "enabled_tools": list(spec.enabled_tools),
            "left_out_tools": [t for t in spec.enabled_tools if t.split("_", 1)[0] not in servers],
            "seeded_data": str(data) if data else None,
        },
    )


def runnable_samples(
    data_dir: Path | str | None, subset: str = "paper", seed_dir: str | None = None
) -> list[Sample]:
    """The tasks that can run here; none is an error listing why each cannot (before any run starts)."""
    _, data = data_paths(data_dir, seed_dir)
    chosen = [t for t in select_tasks(data_dir, subset) if skip_reason(t, data) is None]
    if not chosen:
        raise no_runnable_task(skipped_tasks(data_dir, subset, seed_dir))
    return [to_sample(t, data) for t in chosen]


def named_tools(server: str, tools: list[Tool], enabled: set[str]) -> list[Tool]:
    """The server's tools renamed `<server>_<tool>` as upstream offers them, only the enabled ones."""
    renamed = [ToolDef(t, name=f"{server}_{ToolDef(t).name}") for t in tools]
    return [d.as_tool() for d in renamed if d.name in enabled]


@solver
def atlas_agent(harness: str = DEFAULT_HARNESS) -> Solver:
    """Start the sample's servers on a fresh copy of the seeded data and run the harness with their tools."""
    chosen = HARNESSES.get(harness)

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
                for name in state.metadata["servers"]:
                    spec = SERVERS.get(name).sandbox_spec(data, user)
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
                    return await chosen.solver(tools=tools, system_prompt="")(state, generate)

    return solve


def final_answer(state: TaskState) -> str:
    """The last assistant text (the answer upstream scores)."""
    for message in reversed(state.messages):
        if isinstance(message, ChatMessageAssistant) and message.text.strip():
            return message.text
    return ""


@scorer(metrics=[mean(), stderr()])
def atlas_scorer(judge: Judge | None = None) -> Scorer:
    """Claim coverage of the final answer (one judge call per claim); passes at >= 0.75.

    Args:
        judge: A judge to use instead of the "judge" model role (tests pass a scripted one).
    """

    async def score(state: TaskState, target: Target) -> Score:
        chosen = judge or ModelJudge.from_role(official=OFFICIAL_JUDGE)
        answer = final_answer(state)
        value, results = await judge_claims(chosen, tuple(state.metadata["claims"]), answer)
        model = str(getattr(chosen, "name", type(chosen).__name__))
        return Score(
            value=value,
            answer=answer,
            explanation="; ".join(f"{r.outcome}: {r.claim}" for r in results),
            metadata={
                "passed": passed(value),
                "claims": [vars(r) for r in results],
                "left_out_tools": state.metadata.get("left_out_tools", []),
                "judge": {
                    "model": model,
                    "prompt_sha256": PROMPT_SHA256,
                    "comparable": bool(getattr(chosen, "comparable", False)),
                    "threshold": PASS_THRESHOLD,
                },
            },
        )

    return score


def no_runnable_task(reasons: dict[str, str]) -> ForgeError:
    listing = "\n".join(f"  - {task_id}: {reason}" for task_id, reason in reasons.items())
    return ForgeError(
        f"none of the {len(reasons)} chosen MCP-Atlas tasks can run here:\n{listing}",
        hint="tasks whose reference servers all run offline (calculator, cli-mcp-server, filesystem, memory, "
        "mcp-server-code-runner, git) need the seeded data: --data-dir <upstream repository root>",
    )


@task
def mcpatlas(
    seed: int = 0,
    harness: str = DEFAULT_HARNESS,
    subset: str = "paper",
    data_dir: str | None = None,
    seed_dir: str | None = None,
    max_turns: int = MAX_TURNS,
    max_tokens: int | None = None,
) -> Task:
    """MCP-Atlas (scaleapi/mcp-atlas v1 @ b290e67): the tasks whose MCP servers run here.

    Args:
        seed: Sampling seed passed to the model.
        harness: Harness name (default: MCP-Atlas's own loop, "atlas-loop").
        subset: paper (the 89-task rule) or all.
        data_dir: The task CSV/parquet, its folder, or the upstream repository root.
        seed_dir: The files of the image's /data (default: services/agent-environment/data upstream).
        max_turns: Turns per task (upstream v1: 20).
        max_tokens: Most tokens per model reply (None = the model's default, as upstream).
    """
    samples = runnable_samples(data_dir, subset, seed_dir)
    for sample in samples:
        assert sample.metadata is not None
        sample.metadata["max_turns"] = max_turns
    HARNESSES.get(harness)
    return Task(
        dataset=MemoryDataset(samples, name="mcpatlas"),
        solver=atlas_agent(harness),
        scorer=atlas_scorer(),
        config=GenerateConfig(seed=seed, max_tokens=max_tokens),
        time_limit=TIME_LIMIT_S,
        name="mcpatlas",
        metadata={"benchmark": "mcpatlas", "seed": seed, "harness": harness},
    )
