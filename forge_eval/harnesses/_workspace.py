"""A sample's private directories for a harness: one writable tree, bound into the sandbox as is."""

import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
from inspect_ai.solver import TaskState


@dataclass(frozen=True)
class Workspace:
    """One sample's private directories (the same paths inside the sandbox).

    Attributes:
        root: Holds the others; deleted after the sample.
        work: The harness's working directory (the agent's workspace).
        home: `HOME` (and the harness's config/state dirs under it).
        tmp: `TMPDIR`; not an ancestor of `home` (Codex refuses helper binaries under a temp dir).
        bin: Commands the agent may run (`forge-tool`), first on `PATH`.
    """

    root: Path

    @property
    def work(self) -> Path:
        return self.root / "work"

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def tmp(self) -> Path:
        return self.root / "tmp"

    @property
    def bin(self) -> Path:
        return self.root / "bin"

    def create(self) -> "Workspace":
        for path in (self.work, self.home, self.tmp, self.bin):
            path.mkdir(parents=True, exist_ok=True)
        return self


#: TaskState store key under which an `ExternalHarness` run with `keep_workspace=True` hands back its
#: workspace (see `KeptWorkspace`).
KEPT_KEY = "harness_workspace"
CONVERSATION_FILE = "conversation.json"


@dataclass(frozen=True)
class KeptWorkspace:
    """A sample's workspace kept after its harness exited, for the benchmark's scorer.

    Attributes:
        root: The workspace root; `release_workspace` deletes it (the task's `cleanup`).
        conversation: OpenAI chat messages of the run, as the harness sent them in its last model call,
            plus its final answer; the harness-independent transcript (all calls pass the proxy).
    """

    root: Path
    conversation: list[dict[str, Any]]

    @property
    def work(self) -> Path:
        return Workspace(self.root).work

    @property
    def home(self) -> Path:
        """The run's `HOME`, where the harness left its own state (OpenClaw's session logs)."""
        return Workspace(self.root).home


def kept_workspace(state: TaskState) -> KeptWorkspace | None:
    """The workspace the harness handed back for this sample, or None (not kept, or already released)."""
    kept = state.store.get(KEPT_KEY)
    if not kept or not Path(kept).is_dir():
        return None
    root = Path(kept)
    conversation = json.loads((root / CONVERSATION_FILE).read_text(encoding="utf-8"))
    return KeptWorkspace(root, conversation)


async def release_workspace(state: TaskState) -> None:
    """Delete the kept workspace (a Task `cleanup`: Inspect runs it after scoring)."""
    kept = state.store.get(KEPT_KEY)
    if kept:
        await anyio.to_thread.run_sync(lambda: shutil.rmtree(kept, ignore_errors=True))
        state.store.set(KEPT_KEY, None)
