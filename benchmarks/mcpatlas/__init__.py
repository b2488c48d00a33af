"""MCP-Atlas (scaleapi/mcp-atlas v1 @ b290e67): task rows, the 89-task rule, per-claim judge scoring."""

from forge_eval.benchmarks import BENCHMARKS
from forge_eval.benchmarks.mcpatlas._benchmark import McpAtlas
from forge_eval.benchmarks.mcpatlas._claims import ClaimResult, ModelClaimJudge, judge_claims
from forge_eval.benchmarks.mcpatlas._data import SOURCE, AtlasTask, claims_of, load_file, parse_row, task_file
from forge_eval.benchmarks.mcpatlas._judge import OFFICIAL_JUDGE, claim_prompt
from forge_eval.benchmarks.mcpatlas._scoring import PASS_THRESHOLD, coverage, outcome_score, passed
from forge_eval.benchmarks.mcpatlas._servers import (
    DEFAULT_SERVERS,
    paper_subset,
    skip_reason,
    trajectory_servers,
)

BENCHMARKS.register(McpAtlas.name, McpAtlas())

__all__ = [
    "DEFAULT_SERVERS",
    "OFFICIAL_JUDGE",
    "PASS_THRESHOLD",
    "SOURCE",
    "AtlasTask",
    "ClaimResult",
    "McpAtlas",
    "ModelClaimJudge",
    "claim_prompt",
    "claims_of",
    "coverage",
    "judge_claims",
    "load_file",
    "outcome_score",
    "paper_subset",
    "parse_row",
    "passed",
    "skip_reason",
    "task_file",
    "trajectory_servers",
]
