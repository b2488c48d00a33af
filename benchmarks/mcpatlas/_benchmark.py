"""`McpAtlas`: the benchmark entry for `forge-eval run mcpatlas`.

Tasks run when every server of their reference trajectory runs here (see `_servers.py`); the others are
reported as skipped with, per server, why it cannot run. With no runnable task the run stops with the
full list instead of scoring anything.
"""

from __future__ import annotations

from forge_eval.benchmarks._benchmark import Benchmark, OfficialSettings
from forge_eval.benchmarks.mcpatlas._judge import JUDGE, OFFICIAL_JUDGE
from forge_eval.benchmarks.mcpatlas._scoring import PASS_THRESHOLD
from forge_eval.benchmarks.mcpatlas._task import DEFAULT_HARNESS, TIME_LIMIT_S, mcpatlas, select_tasks


class McpAtlas(Benchmark):
    name = "mcpatlas"
    description = (
        "MCP-Atlas: tool-use tasks over real MCP servers, claim coverage >= 0.75 (paper: 89-task subset)"
    )
    default_harness = DEFAULT_HARNESS
    accepts_data_dir = True
    protocol_pending = (
        "protocol record not yet filled: the claim-judge prompt is our shortened paraphrase of "
        "upstream's, and the agent loop's tool-error handling and time limit differ from upstream's"
    )
    official = OfficialSettings(
        trials=1,
        pass_threshold=PASS_THRESHOLD,
        graded=True,
        time_limit=TIME_LIMIT_S,
        judge_role="judge",
        judge_model=OFFICIAL_JUDGE,
        paper_scores={"success_rate": 0.281},
        paper_source="OpenForgeRL (arXiv 2607.21557), MCP-Atlas 89-task subset after RL (22.5 -> 28.1)",
    )
    judge = JUDGE
    select_function = select_tasks
    task_function = mcpatlas
