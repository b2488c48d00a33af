"""MCP-Atlas's protocol record: each element of upstream's protocol (scaleapi/mcp-atlas v1 @ b290e67) and
what a run used.

The official side of upstream's code and data is pinned here by sha256 (facts about the pinned tree, not
copies of it); the run's side is hashed from the tree the run read. A run is comparable only when it
ran every task of the paper rule with upstream's loop, judge prompt, judge model and data -- and the
environment element differs in every run here: the servers run in bubblewrap rather than upstream's
image, and the tools of servers that cannot run here (offline: those that call live web APIs) are left
out (`left_out_tools`), which changes what the model sees. The element names the servers the run's tasks
started, and which of them reached the live web (online, through the egress gate, as upstream's do).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from forge_eval._errors import ForgeError
from forge_eval.benchmarks._benchmark import RunUsed, task_set
from forge_eval.benchmarks.mcpatlas import _servers
from forge_eval.benchmarks.mcpatlas._data import TREE, AtlasTask, load_file, task_file, upstream_tree
from forge_eval.benchmarks.mcpatlas._judge import OFFICIAL_JUDGE, prompt_source
from forge_eval.benchmarks.mcpatlas._scoring import PASS_THRESHOLD
from forge_eval.benchmarks.mcpatlas._servers import OFFLINE, SERVERS, paper_subset, runnable_servers
from forge_eval.benchmarks.mcpatlas._task import DEFAULT_HARNESS, SEEDED_DATA, seeded_data
from forge_eval.harnesses import HARNESSES
from forge_eval.rundir import (
    NotRecorded,
    NotUsed,
    Ours,
    ProtocolElement,
    ProtocolRecord,
    Source,
    Upstream,
    Value,
    element,
    sha256_files,
    sha256_text,
)
from forge_eval.upstream import (
    ATLAS_LOOP_PACKAGE,
    ATLAS_SCORES_FILE,
    ATLAS_SCRIPT_FILE,
    atlas_import_file,
    atlas_private_name,
)

#: sha256 of upstream's files at b290e67 (files: their bytes; folders: `sha256_files`).
PINNED = {
    ATLAS_SCORES_FILE: "17eba75dff9d71ac1b2835a1b2f80990c4ace8f03294bb235177a00a596a88ab",
    ATLAS_SCRIPT_FILE: "3f6fbc679612c355734138bf81dd3aaeb9dccda856de34da101f577747619309",
    ATLAS_LOOP_PACKAGE: "bf3cb1248223ca2e4687bfdb8b0ca0ebc2c8a1d386b513685848eaf6fb793f49",
    "services/mcp_eval/sample_tasks.csv": "4685bf3ced735391de5e28d6316c5d520832c59aed479a9b505e76b7160dec8b",
    SEEDED_DATA: "c4e234f61bdba737a2bbd0ed1c74ca852e856e4000cd8fa9b11ace743209bd88",
}
#: sha256 of upstream's single-claim judge prompt with `{claim}` / `{response}` left in.
PINNED_JUDGE_PROMPT = "87e98017c03361bee3f792c0e92fdeb2484abaa04131bd1b2f8477ac86e6d434"
#: Upstream's loop settings (request schema and completion script defaults).
LOOP_SETTINGS = {"max_turns": 20, "attempts": 3, "attempt_timeout_s": 240.0, "system_prompt": None}
#: The methodology the record pins, said on its harness element: upstream's 2.0 changed all three.
METHODOLOGY = (
    f"pinned methodology: MCP-Atlas v1 ({TREE.repo}@{TREE.revision}, before 2.0): the Python harness "
    f"services/mcp_eval, {LOOP_SETTINGS['max_turns']} turns, judge {OFFICIAL_JUDGE}; 2.0 changed the "
    "harness (TypeScript), the limit (100 tool calls) and the default judge, so no run is comparable with "
    "leaderboard rows made after that change"
)


def _source(path: str, digest: str, symbol: str | None, value: Any) -> Upstream:
    """Upstream's file by its sha256; a setting read with it is compared together with that sha256."""
    with_digest = {"sha256": digest, "settings": value} if value is not None else None
    return Upstream(
        repo=TREE.repo, commit=TREE.revision, path=path, sha256=digest, symbol=symbol, value=with_digest
    )


def _pinned(path: str, symbol: str | None = None, value: Any = None) -> Upstream:
    return _source(path, PINNED[path], symbol, value)


def _read(tree: Path | None, path: str, symbol: str | None = None, value: Any = None) -> Source:
    """The run's side: the file or folder of the tree the run read, hashed."""
    if tree is None or not (tree / path).exists():
        return NotRecorded(why=f"the run's tree has no {path}")
    target = tree / path
    digest = sha256_text(target.read_bytes()) if target.is_file() else sha256_files([target])
    return _source(path, digest, symbol, value)


def _harness(run: RunUsed, tree: Path | None) -> tuple[Source, Source]:
    official = _pinned(ATLAS_LOOP_PACKAGE, "agent_eval.run_mcp_eval", LOOP_SETTINGS)
    if run.harness != DEFAULT_HARNESS:
        return official, Value(value={"name": run.harness, "version": HARNESSES.get(run.harness).version})
    if tree is None:
        return official, NotRecorded(why="the run's tree is not here")
    script = atlas_import_file(tree, ATLAS_SCRIPT_FILE, atlas_private_name(tree, "script_protocol"), {})
    used = {
        **LOOP_SETTINGS,
        "attempts": script.MAX_RETRY_ATTEMPTS,  # upstream reads these from its environment
        "attempt_timeout_s": script.CLIENT_TIMEOUT,
        "system_prompt": script.SYSTEM_PROMPT if script.USE_SYSTEM_PROMPT else None,
    }
    return official, _read(tree, ATLAS_LOOP_PACKAGE, "agent_eval.run_mcp_eval", used)


def protocol(run: RunUsed) -> ProtocolRecord:
    """Official (upstream's) and this run's side of every protocol element."""
    args = run.task_args
    data_dir = args.get("data_dir") or (str(run.data_dir) if run.data_dir else None)
    path = task_file(data_dir)  # the run read it, so it is here
    try:
        tree: Path | None = upstream_tree(path)
    except ForgeError:
        tree = None
    tasks = load_file(path)
    paper = [t.task_id for t in paper_subset(tasks)]
    harness_official, harness_ours = _harness(run, tree)
    judge_official = Upstream(
        repo=TREE.repo,
        commit=TREE.revision,
        path=ATLAS_SCORES_FILE,
        sha256=PINNED_JUDGE_PROMPT,
        symbol="CoverageEvaluator._get_single_claim_evaluation_prompt",
    )
    judge_ours: Source = prompt_source(tree, TREE.repo, TREE.revision) if tree else NotRecorded(why="no tree")
    grader = ("CoverageEvaluator.evaluate", {"pass_threshold": PASS_THRESHOLD})
    seeds = seeded_data(tree, args.get("seed_dir"))
    seeded: Source = (
        Ours.files("the run's seeded /data", seeds) if seeds else NotUsed(why="no seeded data here")
    )
    if seeds is not None and tree is not None and seeds == (tree / SEEDED_DATA).resolve():
        seeded = _read(tree, SEEDED_DATA)
    data: Source = (
        _read(tree, "services/mcp_eval/sample_tasks.csv")
        if tree is not None and path == tree / "services/mcp_eval/sample_tasks.csv"
        else Value(value={"file": path.name, "sha256": sha256_files([path])})
    )
    no_prompt = "the task's PROMPT is the only message (USE_SYSTEM_PROMPT_IN_COMPLETION off)"
    return ProtocolRecord(
        elements=[
            run.task_set_element(task_set(paper, "paper rule (trajectory servers all key-free)")),
            element("harness", harness_official, harness_ours, note=METHODOLOGY),
            element(
                "agent_prompt",
                _pinned(ATLAS_SCRIPT_FILE, "AsyncMCPTrajectoryGenerator.run_live_task_async", no_prompt),
                _read(tree, ATLAS_SCRIPT_FILE, "AsyncMCPTrajectoryGenerator.run_live_task_async", no_prompt)
                if run.harness == DEFAULT_HARNESS
                else Ours(what=f"the {run.harness} harness's own prompt"),
            ),
            element(
                "agent_sampling",
                Value(value={}, label="the model's defaults (upstream sends no sampling settings)"),
                Value(value=dict(run.sampling)),
            ),
            element(
                "judge_model",
                Value(value=OFFICIAL_JUDGE, label=f"{OFFICIAL_JUDGE} (upstream's gemini/gemini-2.5-pro)"),
                Value(value=run.judge_model),
            ),
            element("judge_prompt", judge_official, judge_ours),
            element("user_model", NotUsed(why="single-turn tasks: no simulated user")),
            element("grader", _pinned(ATLAS_SCORES_FILE, *grader), _read(tree, ATLAS_SCORES_FILE, *grader)),
            _servers_element(run, tasks, seeds),
            element("environment", _pinned(SEEDED_DATA), seeded, name="environment: seeded /data"),
            element("data", _pinned("services/mcp_eval/sample_tasks.csv"), data),
        ]
    )


def _servers_element(run: RunUsed, tasks: list[AtlasTask], seeds: Path | None) -> ProtocolElement:
    """Which servers the run's tasks started, and which of those reached the live web."""
    ran = set(run.task_ids)
    started = sorted({s.name for t in tasks if t.task_id in ran for s in runnable_servers(t, seeds)})
    web = [name for name in started if SERVERS.get(name).web]
    if _servers.online() and web:
        reach = (
            f"the web-API servers ({', '.join(web)}) reached the live web as upstream's do, each through the "
            "run's egress gate (public addresses only, no host port); the npm ones on Node 24 (upstream: "
            "Node 20), whose fetch honours the proxy variables"
        )
    elif _servers.online():
        reach = "online; the run's tasks needed no web-API server"
    else:
        reach = f"offline here: the web-API servers did not run ({OFFLINE})"
    return element(
        "environment",
        Value(value="every ENABLED_TOOLS tool, served by upstream's agent-environment image"),
        Value(
            value={"servers": started, "live_web": web},
            label=f"{', '.join(started) or 'no server'} at upstream's pins, in bubblewrap",
        ),
        name="environment: MCP servers",
        note=f"{reach}; the tools of servers that cannot run here are left out (sample metadata "
        "left_out_tools), so the model sees fewer tools than upstream's",
    )
