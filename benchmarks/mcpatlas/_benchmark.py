"""`McpAtlas`: the benchmark entry for `forge-eval run mcpatlas`.

Loading, the paper's 89-task rule, skip reasons and claim scoring are implemented. Running a task
needs its MCP servers; of the public sample, every task needs live web APIs or the files seeded into
the mcp-atlas Docker image, so none runs here and no agent loop over MCP servers is wired yet.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from inspect_ai import Task
from inspect_ai.dataset import Sample

from forge_eval._errors import ForgeError
from forge_eval.benchmarks._benchmark import Benchmark, OfficialSettings
from forge_eval.benchmarks.mcpatlas._data import AtlasTask, load_file, task_file
from forge_eval.benchmarks.mcpatlas._judge import OFFICIAL_JUDGE, PROMPT_SHA256
from forge_eval.benchmarks.mcpatlas._scoring import PASS_THRESHOLD
from forge_eval.benchmarks.mcpatlas._servers import paper_subset, skip_reason


class McpAtlas(Benchmark):
    name = "mcpatlas"
    description = (
        "MCP-Atlas: tool-use tasks over real MCP servers, claim coverage >= 0.75 (paper: 89-task subset)"
    )
    default_harness = "react"
    accepts_data_dir = True
    official = OfficialSettings(
        trials=1,
        pass_threshold=PASS_THRESHOLD,
        graded=True,
        message_limit=41,  # 20 turns: 1 prompt + 20 x (assistant + tool results)
        judge_role="judge",
        judge_model=OFFICIAL_JUDGE,
        paper_scores={"success_rate": 0.281},
        paper_source="OpenForgeRL (arXiv 2607.21557), MCP-Atlas 89-task subset after RL (22.5 -> 28.1)",
    )

    def _tasks(self, data_dir: Path | None, subset: str = "paper") -> list[AtlasTask]:
        tasks = load_file(task_file(data_dir))
        if subset not in ("paper", "all"):
            raise ForgeError(
                f"unknown MCP-Atlas subset '{subset}'", hint="use paper (the 89-task rule) or all"
            )
        return paper_subset(tasks) if subset == "paper" else list(tasks)

    def load(self, data_dir: Path | None = None) -> list[Sample]:
        return [
            Sample(id=t.task_id, input=t.prompt, metadata={"claims": list(t.claims)})
            for t in self._tasks(data_dir)
            if skip_reason(t) is None
        ]

    def skipped(self, data_dir: Path | None = None, **options: Any) -> dict[str, str]:
        tasks = self._tasks(data_dir, options.get("subset", "paper"))
        return {t.task_id: r for t in tasks if (r := skip_reason(t))}

    def judge_info(self, judge_model: str) -> dict[str, Any]:
        return {"prompt_sha256": PROMPT_SHA256, "settings": {"temperature": 0.0, "calls": "one per claim"}}

    def task(self, *, seed: int, harness: str, **options: Any) -> Task:
        reasons = self.skipped(options.get("data_dir"), **options)
        raise ForgeError(
            f"no MCP-Atlas task can run here ({len(reasons)} skipped: their servers need live web APIs, "
            "keys or the data seeded into the mcp-atlas image); the agent loop over MCP servers is not wired",
            hint="loading, the 89-task rule and claim scoring are in forge_eval.benchmarks.mcpatlas",
        )
