"""Benchmarks: one package per benchmark, registered by name in `BENCHMARKS`, and the kit they share.

The kit: `Benchmark` (the interface every benchmark's entry implements), `select`, `SkipRules`,
`Selection` and `NothingRunnableError` (which tasks a run chooses and which of them can run here),
`benchmark_task` and `sample_agent` (the tail of every Inspect task), `JudgeSetup` and `ModelJudge` (the
LLM judge), `DataSource` and `locate_data` (official data at a pinned revision). Each benchmark package
registers itself when imported; this package imports them all, so `BENCHMARKS` holds every one.
"""

import forge_eval.benchmarks.claweval
import forge_eval.benchmarks.forgelab
import forge_eval.benchmarks.mcpatlas
import forge_eval.benchmarks.online_mind2web
import forge_eval.benchmarks.osworld
import forge_eval.benchmarks.qwenclawbench
import forge_eval.benchmarks.weblab
import forge_eval.benchmarks.webvoyager  # noqa: F401  (each registers itself)
from forge_eval.benchmarks._acquire import DataSource, locate_data
from forge_eval.benchmarks._benchmark import (
    BENCHMARKS,
    RUN_SET_OPTIONS,
    SAMPLING_KEYS,
    Benchmark,
    Card,
    OfficialSettings,
    RunUsed,
    benchmark_table,
    task_set,
)
from forge_eval.benchmarks._judge import (
    JUDGE_ROLE,
    Judge,
    JudgeSetup,
    ModelJudge,
    parse_verdict,
    prompt_sha256,
)
from forge_eval.benchmarks._selection import (
    NothingRunnableError,
    Selection,
    SkipRules,
    reason_counts,
    select,
)
from forge_eval.benchmarks._task import benchmark_task, sample_agent

__all__ = [
    "BENCHMARKS",
    "JUDGE_ROLE",
    "RUN_SET_OPTIONS",
    "SAMPLING_KEYS",
    "Benchmark",
    "Card",
    "DataSource",
    "Judge",
    "JudgeSetup",
    "ModelJudge",
    "NothingRunnableError",
    "OfficialSettings",
    "RunUsed",
    "Selection",
    "SkipRules",
    "benchmark_table",
    "benchmark_task",
    "locate_data",
    "parse_verdict",
    "prompt_sha256",
    "reason_counts",
    "sample_agent",
    "select",
    "task_set",
]
