"""Export forge-eval tasks to veRL's parquet dataset schema (`verl/utils/dataset/rl_dataset.py`).

One row per task: `prompt` is the chat the harness starts from (veRL hands it to the agent loop as
`raw_prompt`), `agent_name` selects `ForgeProxyAgentLoop`, and `extra_info.forge_task` carries the forge
task spec (benchmark, task id, harness, the sample's metadata) as JSON, so the loop can start the same
task in a sandbox. The spec is a JSON string because task metadata differs between tasks and parquet
needs one schema per column. `tools_kwargs` / `interaction_kwargs` are left out: the harness brings its own
tools, RLHFDataset defaults them to {}, and parquet cannot store an empty struct.
"""

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import pandas as pd
from inspect_ai.dataset import Sample

from forge_eval._errors import ForgeError

AGENT_NAME = "forge_proxy_agent"


def _prompt(sample: Sample) -> list[dict[str, str]]:
    if isinstance(sample.input, str):
        return [{"role": "user", "content": sample.input}]
    return [{"role": m.role, "content": m.text} for m in sample.input]


def _ground_truth(target: str | Sequence[str]) -> str:
    return target if isinstance(target, str) else json.dumps(list(target))


def task_rows(
    benchmark: str,
    samples: Iterable[Sample],
    *,
    harness: str,
    split: str = "train",
    ability: str = "agent",
) -> list[dict[str, Any]]:
    """veRL dataset rows for `samples` of `benchmark`, run under `harness`."""
    rows = []
    for index, sample in enumerate(samples):
        if sample.id is None:
            raise ForgeError(
                f"sample {index} of {benchmark} has no id",
                hint="training needs stable task ids (GRPO groups and the sandbox task both use them)",
            )
        task = {
            "benchmark": benchmark,
            "task_id": str(sample.id),
            "harness": harness,
            "metadata": sample.metadata or {},
        }
        rows.append(
            {
                "data_source": benchmark,
                "agent_name": AGENT_NAME,
                "prompt": _prompt(sample),
                "ability": ability,
                "reward_model": {"style": "rule", "ground_truth": _ground_truth(sample.target)},
                "extra_info": {
                    "split": split,
                    "index": index,
                    "forge_task": json.dumps(task, sort_keys=True, default=str),
                },
            }
        )
    return rows


def export_parquet(rows: Sequence[dict[str, Any]], path: Path) -> Path:
    """Write `rows` (from `task_rows`) as a parquet file veRL's RLHFDataset reads."""
    if not rows:
        raise ForgeError(f"no tasks to export to {path}", hint="check the benchmark's data and task filter")
    path.parent.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(list(rows)).to_parquet(path, index=False)
    return path
