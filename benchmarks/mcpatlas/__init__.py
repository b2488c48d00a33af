"""MCP-Atlas (scaleapi/mcp-atlas v1 @ b290e67): task rows, the 89-task rule, real MCP servers in the
sandbox, and upstream's own agent loop and claim judge, run from the pinned tree."""

from forge_eval.benchmarks._benchmark import BENCHMARKS
from forge_eval.benchmarks.mcpatlas._benchmark import McpAtlas
from forge_eval.benchmarks.mcpatlas._data import (
    SOURCE,
    TREE,
    AtlasTask,
    claims_text,
    load_file,
    parse_row,
    task_file,
    upstream_tree,
)
from forge_eval.benchmarks.mcpatlas._judge import (
    JUDGE,
    OFFICIAL_JUDGE,
    ClaimVerdicts,
    claim_prompt_template,
    extract_claims,
    judge_claims,
    scores_module,
)
from forge_eval.benchmarks.mcpatlas._scorer import atlas_scorer, final_answer
from forge_eval.benchmarks.mcpatlas._scoring import PASS_THRESHOLD, passed
from forge_eval.benchmarks.mcpatlas._servers import (
    DEFAULT_SERVERS,
    OFFLINE,
    SERVERS,
    SKIP_RULES,
    AtlasServer,
    install,
    online,
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
    "OFFLINE",
    "PASS_THRESHOLD",
    "SERVERS",
    "SKIP_RULES",
    "SOURCE",
    "TREE",
    "AtlasServer",
    "AtlasTask",
    "ClaimVerdicts",
    "McpAtlas",
    "atlas_agent",
    "atlas_scorer",
    "claim_prompt_template",
    "claims_text",
    "extract_claims",
    "final_answer",
    "install",
    "judge_claims",
    "load_file",
    "mcpatlas",
    "online",
    "paper_subset",
    "parse_row",
    "passed",
    "scores_module",
    "seeded_data",
    "select_tasks",
    "server_problem",
    "skip_reason",
    "task_file",
    "trajectory_servers",
    "upstream_tree",
]
