"""A sample's private directories for a harness: one writable tree, bound into the sandbox as is."""

from dataclasses import dataclass
from pathlib import Path


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
