"""`McpAtlas`: the benchmark entry for `forge-eval run mcpatlas`.

Tasks run when every server of their reference trajectory runs here (see `_servers.py`); the others are
reported as skipped with, per server, why it cannot run. With no runnable task the run stops with the
full list instead of scoring anything.
"""

from __future__ import annotations

from typing import Any

from forge_eval.benchmarks._benchmark import Benchmark, Card, OfficialSettings, RunUsed
from forge_eval.benchmarks.mcpatlas import _protocol
from forge_eval.benchmarks.mcpatlas._judge import JUDGE, OFFICIAL_JUDGE
from forge_eval.benchmarks.mcpatlas._scoring import PASS_THRESHOLD
from forge_eval.benchmarks.mcpatlas._task import DEFAULT_HARNESS, TIME_LIMIT_S, mcpatlas, select_tasks
from forge_eval.rundir import ProtocolRecord


class McpAtlas(Benchmark):
    name = "mcpatlas"
    description = (
        "MCP-Atlas: tool-use tasks over real MCP servers, claim coverage >= 0.75 (paper: 89-task subset)"
    )
    card = Card(
        runs_here="1 of the 10 sample tasks offline (upstream's loop and claim judge)",
        comparable="not offline: web servers' tools are left out (its protocol record says)",
        needs="upstream's tree, MCP servers, a judge model",
    )
    default_harness = DEFAULT_HARNESS
    accepts_data_dir = True
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

    def protocol(self, run: RunUsed) -> ProtocolRecord:
        return _protocol.protocol(run)

    def judge_info(self, judge_model: str) -> dict[str, Any]:
        """Upstream's judge settings; the prompt's sha256 is in the protocol record (read from the run's
        tree, which this call does not know)."""
        return {"settings": dict(JUDGE.settings), "prompt_sha256": _protocol.PINNED_JUDGE_PROMPT}
