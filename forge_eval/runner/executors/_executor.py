"""`Executor`: where a run's shards run (submit, wait, cancel), and `--cluster` addresses."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from forge_eval.runner._worker import ShardJob, ShardOutcome


@dataclass(eq=False)
class ShardHandle:
    """A submitted shard; `ref` is the executor's own (a Ray object ref, a Job name, the job itself)."""

    job: ShardJob
    ref: Any


class Executor(ABC):
    """Runs shards: in this process (`local`), as Ray tasks (`ray`) or as Kubernetes Jobs (`kubernetes`).

    `--cluster SCHEME[:ADDRESS]` picks one by its `schemes` and gives it the address. `shared` says
    whether the workers see the run directory at the driver's path (they write their logs into it);
    otherwise a shard's logs travel with its job and its outcome.
    """

    name: ClassVar[str]
    #: The `--cluster` prefixes that name this executor (`ray://HOST:PORT`, `k8s:NAMESPACE`).
    schemes: ClassVar[tuple[str, ...]]
    #: How `--cluster` addresses look, for messages.
    forms: ClassVar[tuple[str, ...]]

    def __init__(self, address: str, shared: bool) -> None:
        self.address = address
        self.shared = shared

    def check(self, needs: Mapping[str, float], benchmark: str) -> None:
        """Fail at once (a `ForgeError` naming the resource) when no worker can run a shard with `needs`;
        by default every shard can run."""
        return None

    def capacity(self, needs: Mapping[str, float]) -> int:
        """How many shards with `needs` can run at once: the default number of shards."""
        return 1

    def where(self) -> str:
        """The cluster in words, for progress lines."""
        return f"{self.name} {self.address}".strip()

    @abstractmethod
    def submit(self, job: ShardJob) -> ShardHandle:
        """Start the shard (or queue it)."""

    @abstractmethod
    def wait(self, handles: Sequence[ShardHandle]) -> tuple[ShardHandle, ShardOutcome]:
        """Block until one of `handles` ends; its outcome (a lost worker, after the executor's own
        retries, is an outcome with an error)."""

    @abstractmethod
    def cancel(self, handle: ShardHandle) -> None:
        """Stop a shard that has not ended (nothing of it is left running)."""

    def close(self) -> None:
        """Release the connection to the cluster (nothing to release by default)."""
        return None
