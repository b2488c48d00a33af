"""MCP-Atlas (scaleapi/mcp-atlas v1 @ b290e67): task rows, the 89-task rule, real MCP servers over
stdio in upstream's loop, per-claim judge scoring."""

from forge_eval.benchmarks import BENCHMARKS
from forge_eval.benchmarks.mcpatlas._benchmark import McpAtlas
from forge_eval.benchmarks.mcpatlas._claims import ClaimResult, judge_claims
from forge_eval.benchmarks.mcpatlas._data import SOURCE, AtlasTask, claims_of, load_file, parse_row, task_file
from forge_eval.benchmarks.mcpatlas._judge import OFFICIAL_JUDGE, claim_prompt
from forge_eval.benchmarks.mcpatlas._loop import AtlasLoopHarness, atlas_loop
from forge_eval.benchmarks.mcpatlas._scoring import PASS_THRESHOLD, coverage, outcome_score, passed
from forge_eval.benchmarks.mcpatlas._servers import (
    DEFAULT_SERVERS,
    SERVERS,
    AtlasServer,
    install,
    paper_subset,
    server_problem,
    skip_reason,
    trajectory_servers,
)
from forge_eval.benchmarks.mcpatlas._task import atlas_agent, atlas_scorer, mcpatlas, seeded_data

BENCHMARKS.register(McpAtlas.name, McpAtlas())

__all__ = [
    "DEFAULT_SERVERS",
    "OFFICIAL_JUDGE",
    "PASS_THRESHOLD",
    "SERVERS",
    "SOURCE",
    "AtlasLoopHarness",
    "AtlasServer",
    "AtlasTask",
    "ClaimResult",
    "McpAtlas",
    "atlas_agent",
    "atlas_loop",
    "atlas_scorer",
    "claim_prompt",
    "claims_of",
    "coverage",
    "install",
    "judge_claims",
    "load_file",
    "mcpatlas",
    "outcome_score",
    "paper_subset",
    "parse_row",
    "passed",
    "seeded_data",
    "server_problem",
    "skip_reason",
    "task_file",
    "trajectory_servers",
]
