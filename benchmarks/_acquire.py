"""Where an official benchmark's data comes from: `--data-dir`, the user cache, or its upstream source.

Official task data is never shipped with forge-eval. A benchmark names its upstream source at a pinned
revision (`DataSource`); `locate_data` finds it in a folder the user gives (either the benchmark's
own folder or the upstream repository root), else in the cache, else downloads the pinned archive
into the cache once. Offline with no copy, the user gets one message saying where to get the data.
Whichever it is, the folder is checked against the pinned commit's manifest (`forge_eval.upstream`).
"""

from __future__ import annotations

import io
import os
import shutil
import tarfile
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import httpx

from forge_eval._errors import ForgeError, UsageError
from forge_eval.upstream import check_tree

DOWNLOAD_TIMEOUT_S = 120.0


@dataclass(frozen=True)
class DataSource:
    """A benchmark's official data at a pinned revision.

    Attributes:
        benchmark: Benchmark name (cache folder and messages).
        repo: GitHub `owner/name` of the upstream repository.
        revision: Pinned commit.
        marker: Path, relative to the benchmark folder, that proves a folder is one (e.g. `tasks`).
        subdirs: Where the benchmark folder may sit under a given root (upstream layouts and the
            layout of a local copy), tried in order; "" is the root itself.
        manual: Extra instructions for getting the data by hand (gated datasets, ...).
        task_of: A pattern over the repository's paths whose `task` group names the task a file belongs
            to (a changed file of a task taints only the runs of that task; `forge_eval.upstream`).
    """

    benchmark: str
    repo: str
    revision: str
    marker: str
    subdirs: tuple[str, ...] = ("",)
    manual: str = ""
    task_of: str | None = None

    @property
    def archive_url(self) -> str:
        return f"https://codeload.github.com/{self.repo}/tar.gz/{self.revision}"

    def find_in(self, root: Path) -> Path | None:
        """The benchmark folder under `root` (itself or one of `subdirs`), or None."""
        for sub in ("", *self.subdirs):
            candidate = root / sub if sub else root
            if (candidate / self.marker).exists():
                return candidate
        return None


def cache_root() -> Path:
    """The user cache for downloaded benchmark data (`FORGE_CACHE_DIR` or ~/.cache/forge-eval)."""
    base = os.environ.get("FORGE_CACHE_DIR") or Path.home() / ".cache" / "forge-eval"
    return Path(base) / "benchmarks"


def locate_data(
    source: DataSource,
    data_dir: Path | str | None = None,
    download: Callable[[DataSource, Path], None] | None = None,
) -> Path:
    """The benchmark folder: from `data_dir`, else the cache, else downloaded into the cache.

    Raises:
        UsageError: `data_dir` is given but holds no copy of the benchmark.
        ForgeError: no copy anywhere and the download failed (offline): says where to get it.
    """
    if data_dir is not None:
        root = Path(data_dir).expanduser()
        found = source.find_in(root) if root.is_dir() else None
        if found is None:
            raise UsageError(
                f"--data-dir {root} holds no {source.benchmark} data (looked for '{source.marker}' "
                f"in it and in {', '.join(s for s in source.subdirs if s) or 'no subfolders'})",
                hint=f"point --data-dir at a copy of github.com/{source.repo} or at its benchmark folder",
            )
        return _checked(source, found)
    cached = cache_root() / f"{source.benchmark}@{source.revision[:12]}"
    found = source.find_in(cached) if cached.is_dir() else None
    if found is not None:
        return _checked(source, found)
    try:
        (download or _download)(source, cached)
    except (httpx.HTTPError, OSError, tarfile.TarError) as e:
        raise ForgeError(
            f"no {source.benchmark} data here and it could not be downloaded ({type(e).__name__}: {e})",
            hint=(
                f"get github.com/{source.repo} at revision {source.revision} (e.g. `git clone` then "
                f"`git checkout {source.revision[:12]}`) and pass its folder with --data-dir"
                + (f"; {source.manual}" if source.manual else "")
            ),
        ) from None
    found = source.find_in(cached)
    if found is None:
        raise ForgeError(
            f"the {source.benchmark} archive from {source.archive_url} has no '{source.marker}'",
            hint=f"remove {cached} and check the pinned revision {source.revision}",
        )
    return _checked(source, found)


def _checked(source: DataSource, folder: Path) -> Path:
    """`folder`, checked against the pinned commit's manifest (the runner reads the result)."""
    check_tree(folder, source.repo, source.revision, source.task_of)
    return folder


def _download(source: DataSource, target: Path) -> None:
    """Fetch the pinned archive and unpack it (without its top folder) into `target`, atomically."""
    with httpx.Client(timeout=DOWNLOAD_TIMEOUT_S, follow_redirects=True) as client:
        response = client.get(source.archive_url)
        response.raise_for_status()
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=target.name + ".", dir=target.parent))
    try:
        with tarfile.open(fileobj=io.BytesIO(response.content), mode="r:gz") as archive:
            archive.extractall(staging, filter="data")
        tops = list(staging.iterdir())
        unpacked = tops[0] if len(tops) == 1 and tops[0].is_dir() else staging
        unpacked.rename(target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def task_files(root: Path, pattern: str, what: str) -> list[Path]:
    """The task files under `root/tasks` that match `pattern`, sorted; an error naming the layout it
    expects when there are none (the folder of another benchmark, or an empty download)."""
    files = sorted((root / "tasks").glob(pattern))
    if not files:
        raise ForgeError(f"no {what} tasks under {root / 'tasks'} (expected tasks/{pattern})")
    return files
