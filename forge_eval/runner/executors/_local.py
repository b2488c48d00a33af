"""`LocalExecutor` (`--cluster local`): the shards one after another in this process."""

from __future__ import annotations

from collections.abc import Sequence

from forge_eval.runner._worker import ShardJob, ShardOutcome, run_shard
from forge_eval.runner.executors._executor import Executor, ShardHandle


class LocalExecutor(Executor):
    """Runs each shard in-process when waited for: the sharded path without a cluster (a run without
    `--cluster` is one eval of every seed, as before shards existed)."""

    name = "local"
    schemes = ("local",)
    forms = ("local",)

    def __init__(self, address: str = "", shared: bool = True) -> None:
        super().__init__(address, shared=True)  # the run directory is on this machine

    def submit(self, job: ShardJob) -> ShardHandle:
        return ShardHandle(job, None)

    def wait(self, handles: Sequence[ShardHandle]) -> tuple[ShardHandle, ShardOutcome]:
        handle = handles[0]
        return handle, run_shard(handle.job)

    def cancel(self, handle: ShardHandle) -> None:
        """Nothing runs before `wait`."""
