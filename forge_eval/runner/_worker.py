"""What a worker runs: one shard, from the run's spec alone (`run_shard`), in any process on any node.

The worker plans the run again (every check runs on its node: a node without the benchmark's browser or
desktop fails here), serves an embedded model on its own loopback when the spec names no endpoint, and
runs the shard's eval with `eval_set`, which resumes whatever an earlier attempt of the shard left. With a
shared file system (`ShardJob.shared`) it writes into the run's `logs/shards/<key>/`; without, it works
in a temporary folder seeded with the shard's earlier logs and returns the folder's files, which the
driver writes into the run directory.

`python -m forge_eval.runner._worker` runs the job in `$FORGE_SHARD_JOB` (JSON): a Kubernetes Job's entry.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import tempfile
from contextlib import ExitStack
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from forge_eval._errors import ForgeError
from forge_eval.harnesses import harness_settings
from forge_eval.rundir import RunDir
from forge_eval.runner._execute import eval_options, run_eval_set, serve_roles
from forge_eval.runner._model import ModelServing, resolved_model
from forge_eval.runner._plan import plan_run
from forge_eval.runner._shards import Shard, read_shard_files, shard_dir, write_shard_files
from forge_eval.runner._spec import RunSpec

JOB_ENV = "FORGE_SHARD_JOB"


@dataclass(frozen=True)
class ShardJob:
    """A shard and everything a worker needs to run it.

    Attributes:
        spec: The run's spec (the worker plans the run from it).
        shard: The shard.
        shared: Whether the worker sees the run directory at `spec.out` (then it writes its logs there).
        needs: What the shard holds on its node (`shard_needs`): a CPU, a slot of a browser, ...
        files: Without a shared file system, the shard's earlier log files (name -> bytes) to resume from.
    """

    spec: RunSpec
    shard: Shard
    shared: bool
    needs: dict[str, float] = field(default_factory=lambda: {"CPU": 1.0})
    files: dict[str, bytes] = field(default_factory=dict)

    def to_json(self) -> str:
        """The job as JSON (a shared-file-system job: it carries no files)."""
        assert not self.files, "a JSON job reads its earlier logs from the shared run directory"
        data = {"spec": self.spec.to_dict(), "shard": self.shard.to_dict(), "shared": self.shared}
        return json.dumps({**data, "needs": self.needs})

    @classmethod
    def from_json(cls, text: str) -> ShardJob:
        data = json.loads(text)
        spec, shard = RunSpec.from_dict(data["spec"]), Shard.from_dict(data["shard"])
        return cls(spec, shard, bool(data["shared"]), dict(data["needs"]))


@dataclass(frozen=True)
class ShardOutcome:
    """How a shard's run ended on its worker.

    Attributes:
        key: The shard's key.
        host: The worker's host name.
        node: Where it ran: the host name, or the executor's own name of the node (a Ray node id).
        started, ended: UTC times, ISO 8601.
        error: Why the shard could not finish (the model stopped answering, a failed check); None when
            its eval ran (its samples may still have failed: the logs say).
        files: Without a shared file system, the shard's log files (name -> bytes).
        records: Without a shared file system, the harness programs' call records of the shard (path
            under the run's records/ -> bytes).
    """

    key: str
    host: str
    node: str
    started: str
    ended: str
    error: str | None = None
    files: dict[str, bytes] = field(default_factory=dict)
    records: dict[str, bytes] = field(default_factory=dict)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def run_shard(job: ShardJob, serve: ModelServing = resolved_model) -> ShardOutcome:
    """Run one shard (see the module doc); errors a user can meet come back in `ShardOutcome.error`.
    `serve` gives the shard its models (by default, an embedded model's server of its own)."""
    started, shard = _now(), job.shard
    with ExitStack() as stack:
        if job.shared:
            folder = shard_dir(job.spec.log_dir, shard)
            records = RunDir(job.spec.out).records
        else:
            work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix=f"forge-{shard.key}-")))
            folder, records = work / "logs", work / "records"
        write_shard_files(folder, job.files)
        try:
            error = _run(job, folder, records, stack, serve)
        except ForgeError as e:
            error = e.message
        files = {} if job.shared else read_shard_files(folder)
        kept = {} if job.shared else read_shard_files(records)
    host = socket.gethostname()
    return ShardOutcome(shard.key, host, host, started, _now(), error, files, kept)


def _run(job: ShardJob, folder: Path, records: Path, stack: ExitStack, serve: ModelServing) -> str | None:
    spec, shard = job.spec, job.shard
    plan = plan_run(spec)
    model = stack.enter_context(serve(spec.model, spec.model_base_url, plan.model_args, spec.deterministic))
    roles = serve_roles(plan, model, stack, serve)
    stack.enter_context(harness_settings(records, sandbox=not spec.no_sandbox, lean=model.embedded))
    task = plan.benchmark.task(seed=shard.seed, harness=plan.harness, **plan.options)
    wanted = set(shard.task_ids)
    task.dataset = task.dataset.filter(lambda sample: str(sample.id) in wanted)
    # a shard holds one slot of what a sample needs (a desktop, a browser): one such sample at a time
    slots = 1 if set(job.needs) - {"CPU"} else None
    failure = run_eval_set(
        [task],
        folder,
        model,
        epochs=shard.epochs,
        max_samples=slots,
        display="none",
        **eval_options(spec, model, roles),
    )
    return failure.message if failure is not None else None


def main() -> int:
    """Run the job in `$FORGE_SHARD_JOB`; the last output line is the outcome (JSON), exit 1 on error."""
    outcome = run_shard(ShardJob.from_json(os.environ[JOB_ENV]))
    said = {k: v for k, v in vars(outcome).items() if k not in ("files", "records")}
    print("FORGE_SHARD " + json.dumps(said), flush=True)
    return 0 if outcome.error is None else 1


if __name__ == "__main__":
    sys.exit(main())
