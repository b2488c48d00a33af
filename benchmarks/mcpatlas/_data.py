"""MCP-Atlas task rows (TASK, ENABLED_TOOLS, PROMPT, TRAJECTORY, GTFA_CLAIMS) from CSV or parquet.

The repository ships the 10-task `sample_tasks.csv`; the 500 public tasks are the Hugging Face parquet
(`ScaleAI/MCP-Atlas`). Both have the same columns; JSON-valued columns may hold JSON text (CSV) or
already-decoded lists (parquet). GTFA_CLAIMS is kept as upstream's scorer reads it (JSON text): its
claims are split and cleaned by upstream's own `extract_claims` when a sample is scored.
"""

from __future__ import annotations

import csv
import json
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pandas as pd

from forge_eval._errors import ForgeError, UsageError
from forge_eval.benchmarks._acquire import DataSource, locate_data
from forge_eval.upstream import ATLAS_SCORES_FILE

COLUMNS = ("TASK", "ENABLED_TOOLS", "PROMPT", "TRAJECTORY", "GTFA_CLAIMS")
SAMPLE_FILE = "sample_tasks.csv"
SOURCE = DataSource(
    benchmark="mcpatlas",
    repo="scaleapi/mcp-atlas",
    revision="b290e67",
    marker=SAMPLE_FILE,
    subdirs=("services/mcp_eval", "scaleapi-mcp-atlas_b290e67"),
    manual="the 500 tasks are a parquet on Hugging Face (ScaleAI/MCP-Atlas); pass its folder as --data-dir",
)
#: The whole pinned tree (upstream's loop, judge and seeded /data run from it), cached beside the tasks.
TREE = DataSource(
    benchmark="mcpatlas",
    repo=SOURCE.repo,
    revision=SOURCE.revision,
    marker=ATLAS_SCORES_FILE,
    subdirs=("scaleapi+mcp-atlas@b290e67", "mcp-atlas"),
)


@dataclass(frozen=True)
class AtlasTask:
    """One MCP-Atlas task: its enabled tools (`<server>_<tool>`), prompt, reference calls, and its
    GTFA_CLAIMS as JSON text (upstream's `extract_claims` splits them when the sample is scored)."""

    task_id: str
    enabled_tools: tuple[str, ...]
    prompt: str
    trajectory_tools: tuple[str, ...]
    gtfa_claims: str

    @property
    def enabled_servers(self) -> frozenset[str]:
        return frozenset(server_of(t) for t in self.enabled_tools)


def server_of(tool: str) -> str:
    """`osm-mcp-server_geocode_address` -> `osm-mcp-server` (server names never contain '_')."""
    return tool.split("_", 1)[0]


def _json_list(value: Any, where: str) -> list[Any]:
    if isinstance(value, list):
        return value
    if hasattr(value, "tolist"):  # numpy arrays from parquet
        return list(value.tolist())
    try:
        data = json.loads(value) if isinstance(value, str) and value.strip() else []
    except json.JSONDecodeError as e:
        raise ForgeError(f"{where}: not valid JSON ({e.msg} at position {e.pos})") from None
    if not isinstance(data, list):
        raise ForgeError(f"{where}: expected a JSON list, got {type(data).__name__}")
    return data


def claims_text(value: Any, where: str) -> str:
    """GTFA_CLAIMS as the text upstream's scorer reads from its CSV (decoded parquet lists as JSON)."""
    if hasattr(value, "tolist"):  # numpy arrays from parquet
        value = value.tolist()
    text = json.dumps(value) if isinstance(value, list) else str(value if value is not None else "")
    if not text.strip() or text.strip() == "[]":
        raise ForgeError(f"{where}: no claims")
    return text


def tool_calls(trajectory: list[Any]) -> tuple[str, ...]:
    names = []
    for message in trajectory:
        for call in (message.get("tool_calls") or []) if isinstance(message, dict) else []:
            name = (call.get("function") or {}).get("name")
            if name:
                names.append(str(name))
    return tuple(names)


def parse_row(row: dict[str, Any], where: str) -> AtlasTask:
    missing = [c for c in COLUMNS if c not in row]
    if missing:
        raise ForgeError(
            f"{where}: missing column(s) {', '.join(missing)}", hint=f"expected {', '.join(COLUMNS)}"
        )
    task_id = str(row["TASK"]).strip()
    if not task_id:
        raise ForgeError(f"{where}: field 'TASK' is empty")
    if not str(row["PROMPT"]).strip():
        raise ForgeError(f"{where} (task {task_id}): field 'PROMPT' is empty")
    claims = claims_text(row["GTFA_CLAIMS"], f"{where} (task {task_id}) field 'GTFA_CLAIMS'")
    return AtlasTask(
        task_id=task_id,
        enabled_tools=tuple(
            str(t)
            for t in _json_list(row["ENABLED_TOOLS"], f"{where} (task {task_id}) field 'ENABLED_TOOLS'")
        ),
        prompt=str(row["PROMPT"]),
        trajectory_tools=tool_calls(
            _json_list(row["TRAJECTORY"], f"{where} (task {task_id}) field 'TRAJECTORY'")
        ),
        gtfa_claims=claims,
    )


@cache
def load_file(path: Path) -> tuple[AtlasTask, ...]:
    """Tasks of one CSV or parquet file, in file order."""
    if path.suffix == ".parquet":
        rows = pd.read_parquet(path).to_dict(orient="records")
    else:
        csv.field_size_limit(sys.maxsize)  # trajectories are long JSON texts
        with path.open(newline="", encoding="utf-8") as handle:
            rows = list(csv.DictReader(handle))
    if not rows:
        raise ForgeError(f"no MCP-Atlas tasks in {path}")
    return tuple(
        parse_row(r, f"{path} row {i + 2 if path.suffix != '.parquet' else i}") for i, r in enumerate(rows)
    )


def task_file(data_dir: Path | str | None = None) -> Path:
    """A given .csv/.parquet file; a folder holding one parquet (the Hugging Face dataset, 500 tasks,
    top level or `data/`); else the sample CSV in the folder / upstream root / cache."""
    if data_dir is not None and Path(data_dir).suffix in (".csv", ".parquet"):
        path = Path(data_dir).expanduser()
        if not path.is_file():
            raise ForgeError(f"--data-dir {path}: no such file")
        return path
    if data_dir is not None and Path(data_dir).is_dir():
        parquets = sorted(Path(data_dir).glob("*.parquet")) + sorted(Path(data_dir).glob("data/*.parquet"))
        if len(parquets) == 1:
            return parquets[0]
        if len(parquets) > 1:
            raise UsageError(
                f"--data-dir {data_dir} holds {len(parquets)} parquet files: "
                f"{', '.join(p.name for p in parquets)}",
                hint="point it at a folder with exactly one MCP-Atlas parquet",
            )
    return locate_data(SOURCE, data_dir) / SAMPLE_FILE


def upstream_tree(task_path: Path) -> Path:
    """The pinned upstream tree: the checkout holding `task_path` (its `services/mcp_eval/...`), else the
    cached tree, downloaded when online.

    Raises:
        ForgeError: neither is here (offline, no copy): says where to get the tree.
    """
    for parent in task_path.resolve().parents:
        if (parent / ATLAS_SCORES_FILE).is_file():
            return parent
    try:
        return locate_data(TREE)
    except ForgeError as e:
        raise ForgeError(
            f"MCP-Atlas runs upstream's agent loop and claim judge from its pinned tree, which is not here "
            f"({e})",
            hint=f"pass --data-dir <a checkout of github.com/{TREE.repo} at {TREE.revision}>",
        ) from None
