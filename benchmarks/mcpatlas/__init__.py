"""MCP-Atlas (scaleapi/mcp-atlas v1 @ b290e67): task rows, the 89-task rule, real MCP servers over
stdio in upstream's loop, per-claim judge scoring."""

from forge_eval.benchmarks._benchmark import BENCHMARKS
from forge_eval.benchmarks.mcpatlas._benchmark import McpAtlas
from forge_eval.benchmarks.mcpatlas._claims import ClaimResult, judge_claims
from forge_eval.benchmarks.mcpatlas._data import SOURCE, AtlasTask, claims_of, load_file, parse_row, task_file
from forge_eval.benchmarks.mcpatlas._judge import JUDGE, OFFICIAL_JUDGE, claim_prompt
from forge_eval.benchmarks.mcpatlas._scorer import atlas_scorer, final_answer
from forge_eval.benchmarks.mcpatlas._scoring import PASS_THRESHOLD, coverage, outcome_score, passed
from forge_eval.benchmarks.mcpatlas._servers import (
    DEFAULT_SERVERS,
    SERVERS,
    SKIP_RULES,
    AtlasServer,
    install,
    paper_subset,
    server_problem,
    skip_reason,
    trajectory_servers,
)
from forge_eval.benchmarks.mcpatlas._task import atlas_agent, mcpatlas, seeded_data, select_tasks

BENCHMARKS.register(McpAtlas.name, McpAtlas())

__all__ = [
    "DEFAULT_SERVERS",
    "JUDGE",
    "OFFICIAL_JUDGE",
    "PASS_THRESHOLD",
    "SERVERS",
    "SKIP_RULES",
    "SOURCE",
    "AtlasServer",
    "AtlasTask",
    "ClaimResult",
    "McpAtlas",
    "atlas_agent",
    "atlas_scorer",
    "claim_prompt",
    "claims_of",
    "coverage",
    "final_answer",
    "install",
    "judge_claims",
    "load_file",
    "mcpatlas",
    "outcome_score",
    "paper_subset",
    "parse_row",
    "passed",
    "seeded_data",
    "select_tasks",
    "server_problem",
    "skip_reason",
    "task_file",
    "trajectory_servers",
]
