"""A run as shards: how the tasks are split, and the in-process `local` executor (merge and resume)."""

from __future__ import annotations

import pandas as pd
import pytest

from forge_eval.runner import RunSpec, execute_sharded, plan_run, plan_shards
from forge_eval.runner._shards import read_shard_files, write_shard_files
from forge_eval.runner.executors import LocalExecutor
from tests.runner._recording_server import recording_server

MODEL = "openai-api/rec/m"


@pytest.fixture(autouse=True)
def _api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REC_API_KEY", "test")


def _spec(url: str, out, **kw) -> RunSpec:  # noqa: ANN001
    return RunSpec("forgelab", (3, 4), out, epochs=2, model=MODEL, model_base_url=url, quick=True, **kw)


def test_shards_cover_each_task_of_each_seed_once_with_stable_keys(tmp_path) -> None:
    with recording_server() as (url, _seen):
        plan = plan_run(_spec(url, tmp_path / "run", limit=7))
    shards = plan_shards(plan, 5)
    assert [s.key for s in shards] == [f"seed{seed}-{i}of3" for seed in (3, 4) for i in (1, 2, 3)]
    for seed in (3, 4):
        ids = [t for s in shards if s.seed == seed for t in s.task_ids]
        assert len(ids) == len(set(ids)) == 7  # --limit 7 of the quick subset's 8
    assert {s.epochs for s in shards} == {2} and sum(s.samples for s in shards) == 2 * 7 * 2
    assert plan_shards(plan, 5) == shards  # the same command plans the same shards
    assert len(plan_shards(plan, 100)) == 2 * 7  # at most one task per shard
    assert len(plan_shards(plan, 1)) == 2  # at least one shard per seed


def test_returned_files_round_trip_and_never_leave_their_folder(tmp_path) -> None:
    source = tmp_path / "worker"
    (source / "rollout-1").mkdir(parents=True)
    (source / "rollout-1" / "calls.jsonl").write_bytes(b"{}\n")
    (source / "a.eval").write_bytes(b"log")
    files = read_shard_files(source)
    assert files == {"a.eval": b"log", "rollout-1/calls.jsonl": b"{}\n"}
    write_shard_files(tmp_path / "run", files)
    assert read_shard_files(tmp_path / "run") == files
    for bad in ("../escape", "/etc/passwd", "x/../../escape", ""):
        with pytest.raises(ValueError, match="outside its folder"):
            write_shard_files(tmp_path / "run", {bad: b"no"})
    assert not (tmp_path / "escape").exists()


@pytest.mark.slow
def test_local_shards_merge_like_a_local_run_and_resume_keeps_them(tmp_path) -> None:
    with recording_server() as (url, seen):
        whole = execute_sharded(plan_run(_spec(url, tmp_path / "run")), LocalExecutor(), 4).results
        asked = len(seen)
        again = execute_sharded(plan_run(_spec(url, tmp_path / "run")), LocalExecutor(), 4).results
    assert whole["status"] == again["status"] == "complete"
    assert asked == 2 * 8 * 2 and len(seen) == asked  # the second invocation ran nothing
    trials = pd.read_csv(tmp_path / "run" / "trials.csv")
    assert len(trials) == 32 and not trials.duplicated(["task_id", "seed", "epoch"]).any()
    assert whole["metrics"] == again["metrics"] and whole["n_tasks"] == 8
    assert (tmp_path / "run" / "shards.json").stat().st_mode & 0o777 == 0o600  # private like results.json
