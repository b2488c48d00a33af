"""Compaction of the JSONL records to Parquet (token ids as int32 lists, bodies as JSON strings).

Columns follow the record models field by field, so the Parquet files and `records.py` cannot drift:
token ids become `list<int32>`, logprobs `list<float32>`, nested bodies JSON text, scalars keep their type.
"""

import json
import types
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from pydantic import BaseModel

from forge_eval.proxy._records import (
    CALLS_FILE,
    attempt_dir,
    iter_attempts,
    load_calls,
    read_rollout,
)
from forge_eval.proxy.records import CallRecord, RolloutRecord

_INT32_LISTS = {"prompt_token_ids", "completion_token_ids"}
_FLOAT32_LISTS = {"completion_logprobs"}


def _arrow_type(name: str, annotation: Any) -> pa.DataType:
    if name in _INT32_LISTS:
        return pa.list_(pa.int32())
    if name in _FLOAT32_LISTS:
        return pa.list_(pa.float32())
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
        annotation = args[0] if len(args) == 1 else Any
    scalar = {str: pa.string(), int: pa.int64(), float: pa.float64(), bool: pa.bool_()}
    if annotation in scalar:
        return scalar[annotation]
    if typing.get_origin(annotation) is typing.Literal:
        return pa.string()
    return pa.large_string()  # dicts, lists of models, Any: JSON text


def schema_of(model: type[BaseModel]) -> pa.Schema:
    """The Parquet schema of a record model."""
    return pa.schema([pa.field(n, _arrow_type(n, f.annotation)) for n, f in model.model_fields.items()])


def _rows(records: list[BaseModel], schema: pa.Schema) -> pa.Table:
    columns: dict[str, list[Any]] = {f.name: [] for f in schema}
    for record in records:
        data = record.model_dump(mode="json")
        for f in schema:
            value = data.get(f.name)
            if f.type == pa.large_string() and value is not None:
                value = json.dumps(value, ensure_ascii=False)
            columns[f.name].append(value)
    return pa.table(columns, schema=schema)


@dataclass
class CompactResult:
    calls_path: Path
    rollouts_path: Path
    n_calls: int
    n_rollouts: int
    skipped_running: int
    torn_lines: int = 0


def compact(records_dir: Path, out_dir: Path, *, finished_only: bool = False) -> CompactResult:
    """Write `calls.parquet` and `rollouts.parquet` for every rollout attempt under `records_dir`.

    Args:
        records_dir: The proxy's records directory.
        out_dir: Where the two Parquet files go (created).
        finished_only: Skip attempts whose rollout is still `running` (their records may still grow).
    """
    records_dir, out_dir = Path(records_dir), Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    call_schema, rollout_schema = schema_of(CallRecord), schema_of(RolloutRecord)
    calls_path, rollouts_path = out_dir / "calls.parquet", out_dir / "rollouts.parquet"
    n_calls = skipped = torn = 0
    rollouts: list[BaseModel] = []
    with pq.ParquetWriter(calls_path, call_schema, compression="zstd") as writer:
        for rollout_id, attempt in iter_attempts(records_dir):
            rollout = read_rollout(records_dir, rollout_id, attempt)
            if finished_only and (rollout is None or rollout.termination == "running"):
                skipped += 1
                continue
            calls, cut = load_calls(attempt_dir(records_dir, rollout_id, attempt) / CALLS_FILE)
            torn += cut  # a write cut short (crash, full disk): never acknowledged, so not a call
            if calls:
                writer.write_table(_rows(list(calls), call_schema))  # one attempt in memory at a time
            n_calls += len(calls)
            if rollout is not None:
                rollouts.append(rollout)
    pq.write_table(_rows(rollouts, rollout_schema), rollouts_path, compression="zstd")
    return CompactResult(calls_path, rollouts_path, n_calls, len(rollouts), skipped, torn)
