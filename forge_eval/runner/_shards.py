"""A run as a set of shards: (benchmark, seed, slice of task ids, epochs), each one Inspect eval.

A shard's identity is its key (`seed3-2of4`): the seed, its slice's place and the number of slices per
seed. The same command plans the same keys, so a resumed run finds each shard's logs in
`logs/shards/<key>/`, where the shard's own `eval_set` resumes them (only missing or failed samples run
again). Should two plans overlap (another `--shards`), the merge still counts each (seed, task, epoch)
once: `trials_table` keeps the newest sample of each.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from inspect_ai.log import list_eval_logs, read_eval_log

from forge_eval.harnesses import HARNESSES
from forge_eval.rundir import RunDir, write_json
from forge_eval.runner._plan import RunPlan

SHARDS_DIR = "shards"


@dataclass(frozen=True)
class Shard:
    """One Inspect eval of a run: `task_ids` of `seed`, `epochs` trials each.

    Attributes:
        key: Stable name (`seed<S>-<i>of<k>`): its log folder and its name in progress lines.
        seed: The run seed.
        task_ids: The slice of the run's task ids this shard runs.
        epochs: Trials per task.
    """

    key: str
    seed: int
    task_ids: tuple[str, ...]
    epochs: int

    @property
    def samples(self) -> int:
        return len(self.task_ids) * self.epochs

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Shard:
        return cls(data["key"], int(data["seed"]), tuple(data["task_ids"]), int(data["epochs"]))


def run_task_ids(plan: RunPlan) -> list[str]:
    """The task ids the run chose, in dataset order (the first `--limit` of them)."""
    options = {k: v for k, v in plan.options.items() if k != "data_dir"}
    samples = plan.benchmark.load(plan.spec.data_dir, **options)
    ids = [str(s.id) for s in samples]
    return ids[: plan.spec.limit] if plan.spec.limit else ids


def plan_shards(plan: RunPlan, n_shards: int) -> list[Shard]:
    """Split the run into about `n_shards` shards: each seed's tasks cut into equal contiguous slices
    (at least one slice per seed, at most one task per slice)."""
    spec = plan.spec
    assert spec.epochs is not None
    ids = run_task_ids(plan)
    per_seed = min(len(ids), max(1, math.ceil(n_shards / len(spec.seeds))))
    shards = []
    for seed in spec.seeds:
        for i in range(per_seed):
            part = ids[i * len(ids) // per_seed : (i + 1) * len(ids) // per_seed]
            shards.append(Shard(f"seed{seed}-{i + 1}of{per_seed}", seed, tuple(part), spec.epochs))
    return shards


def shard_needs(plan: RunPlan) -> dict[str, float]:
    """What one shard holds on its node: a CPU and the custom resources one sample needs (the
    benchmark's and the harness's, e.g. `browser`, `desktop`, `sandbox`); a shard runs one such sample
    at a time when it needs any."""
    needs: dict[str, float] = {"CPU": 1.0}
    for source in (plan.benchmark.resources, HARNESSES.get(plan.harness).resources):
        for name, amount in source.items():
            needs[name] = max(needs.get(name, 0.0), float(amount))
    return needs


def shard_dir(log_dir: Path, shard: Shard) -> Path:
    return log_dir / SHARDS_DIR / shard.key


def shard_finished(log_dir: Path, shard: Shard) -> bool:
    """Whether the shard's folder holds a log that succeeded with all of the shard's samples."""
    folder = shard_dir(log_dir, shard)
    for info in list_eval_logs(str(folder)) if folder.is_dir() else []:
        try:
            header = read_eval_log(info, header_only=True)
        except Exception:  # a log cut off by a lost node holds nothing finished
            continue
        done = header.results.completed_samples if header.results else 0
        if header.status == "success" and done >= shard.samples:
            return True
    return False


def read_shard_files(folder: Path) -> dict[str, bytes]:
    """The files under `folder` by relative path: a shard's logs or call records, sent between a worker
    and the driver when they share no file system."""
    if not folder.is_dir():
        return {}
    files = sorted(p for p in folder.rglob("*") if p.is_file())
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in files}


def write_shard_files(folder: Path, files: Mapping[str, bytes]) -> None:
    """Write files returned by `read_shard_files` under `folder`; a path that would leave it is refused."""
    for name, data in files.items():
        relative = PurePosixPath(name)
        if relative.is_absolute() or not relative.parts or ".." in relative.parts:
            raise ValueError(f"a shard returned a file path outside its folder: {name!r}")
        target = folder.joinpath(*relative.parts)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)


def record_shards(run: RunDir, records: Mapping[str, Mapping[str, Any]]) -> None:
    """Write shards.json: per shard key, where and when it ran (earlier invocations' entries kept)."""
    write_json(run.shards, {**(run.read_json(RunDir.SHARDS) or {}), **records})
