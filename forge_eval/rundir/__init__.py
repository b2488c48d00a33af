"""The run directory as a contract: what `forge-eval run` writes and every other command reads.

- `RunDir(path)` names every file of a run directory (results.json, trials.csv, run.json, report.html,
  behavior.json, budgets.json, logs/, records/; compare.json and compare.html of a comparison).
- `RunResults` is results.json as pydantic models (`write_results` / `load_results`, which lists every
  problem of an invalid file at once); its `protocol` block is the protocol record (`ProtocolRecord`):
  for every element of the benchmark's official protocol, what it uses, what this run used, whether they
  are the same, and so whether the run is `comparable` with the benchmark's published numbers.
- `TRIAL_COLUMNS`, `write_trials` and `read_trials`: trials.csv, one row per task x seed x epoch.
- `ToolSpec` and `TOOL_SPECS_KEY`: how a sample's service tools touch their services, recorded in its
  metadata (`tool_specs_metadata`) and read back by behavioral analysis (`read_tool_specs`).
- `USAGE_LEDGER` (`read_usage_ledger` / `write_usage_ledger`): every sample attempt's calls, tokens and
  time, kept in the log folder across retries and resumes (Inspect's retries remove older logs).
- `make_private`: the run's logs, records and files readable by this uid only (`PRIVATE_DIR_MODE`,
  `PRIVATE_FILE_MODE`), since they hold transcripts and the model's answers.
- `write_json` / `write_text`: the one atomic writer (temporary file, then rename), NaN-safe for JSON.

Filling a protocol record (in a `Benchmark.protocol(run)`; compare like with like: a file with the same
file, a built text with the text the run sent)::

    from forge_eval.rundir import NotUsed, Ours, ProtocolRecord, Upstream, Value, element

    pin = {"repo": "claw-eval/claw-eval", "commit": "9365e1a"}
    grader = Upstream.file(tree, path="tasks/T002/grader.py", **pin)  # read from the pinned tree
    ProtocolRecord(elements=[
        element("grader", grader),                      # ours = official: the run ran that very file
        element("agent_sampling", Value(value={"temperature": 0}), Value(value=dict(run.sampling))),
        element("environment", Upstream.file(tree, path="Dockerfile", **pin), Ours(what="bubblewrap"),
                equivalent="the same tools and files; only the isolation differs"),
        element("user_model", NotUsed(why="single-turn tasks")),
        ...
    ])
"""

from forge_eval._files import json_safe, write_json, write_text
from forge_eval.rundir._access import PRIVATE_DIR_MODE, PRIVATE_FILE_MODE, make_private
from forge_eval.rundir._paths import RunDir
from forge_eval.rundir._protocol import (
    ELEMENTS,
    NotRecorded,
    NotUsed,
    Ours,
    ProtocolElement,
    ProtocolRecord,
    Source,
    Unpinned,
    Upstream,
    Value,
    describe,
    differences,
    element,
    same,
    sha256_files,
    sha256_text,
)
from forge_eval.rundir._results import (
    HarnessMatrix,
    JudgeInfo,
    MetricResult,
    ReferenceScores,
    RunResults,
    SeedEstimate,
    SkippedTask,
    SubsetInfo,
    load_results,
    metric_order,
    problems,
    write_results,
)
from forge_eval.rundir._tools import TOOL_SPECS_KEY, ToolSpec, read_tool_specs, tool_specs_metadata
from forge_eval.rundir._trials import (
    LOG_FILE,
    REQUIRED_COLUMNS,
    TRIAL_COLUMNS,
    metadata_columns,
    read_trials,
    write_trials,
)
from forge_eval.rundir._usage import USAGE_KEY, USAGE_LEDGER, read_usage_ledger, write_usage_ledger

__all__ = [
    "ELEMENTS",
    "LOG_FILE",
    "PRIVATE_DIR_MODE",
    "PRIVATE_FILE_MODE",
    "REQUIRED_COLUMNS",
    "TOOL_SPECS_KEY",
    "TRIAL_COLUMNS",
    "USAGE_KEY",
    "USAGE_LEDGER",
    "HarnessMatrix",
    "JudgeInfo",
    "MetricResult",
    "NotRecorded",
    "NotUsed",
    "Ours",
    "ProtocolElement",
    "ProtocolRecord",
    "ReferenceScores",
    "RunDir",
    "RunResults",
    "SeedEstimate",
    "SkippedTask",
    "Source",
    "SubsetInfo",
    "ToolSpec",
    "Unpinned",
    "Upstream",
    "Value",
    "describe",
    "differences",
    "element",
    "json_safe",
    "load_results",
    "make_private",
    "metadata_columns",
    "metric_order",
    "problems",
    "read_tool_specs",
    "read_trials",
    "same",
    "sha256_files",
    "sha256_text",
    "tool_specs_metadata",
    "read_usage_ledger",
    "write_usage_ledger",
    "write_json",
    "write_results",
    "write_text",
    "write_trials",
]
