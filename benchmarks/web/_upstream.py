"""Where the live-web benchmarks' official task data comes from: Fara's and MolmoWeb's repositories.

Both WebVoyager and Online-Mind2Web ship in each of them (Fara's copies are the older versions, MolmoWeb's
the revised ones), so the two pins and their folder layouts live here once.
"""

from __future__ import annotations

from pathlib import Path

from forge_eval._errors import UnknownNameError
from forge_eval.benchmarks._acquire import DataSource, locate_data

FARA_REPO, FARA_REVISION = "microsoft/fara", "3f3f1fd"
MOLMOWEB_REPO, MOLMOWEB_REVISION = "allenai/molmoweb", "6a841b4"


def fara_source(benchmark: str, marker: str, folder: str) -> DataSource:
    """A file of Fara's `webeval/data/<folder>` (or of a copy of just that folder)."""
    archive_root = f"{FARA_REPO.replace('/', '-')}_{FARA_REVISION}"
    return DataSource(
        benchmark=benchmark,
        repo=FARA_REPO,
        revision=FARA_REVISION,
        marker=marker,
        subdirs=(f"webeval/data/{folder}", folder, f"{archive_root}/{folder}"),
    )


def molmoweb_source(benchmark: str, marker: str) -> DataSource:
    """A file of MolmoWeb's benchmark data (in the repository root, `data/` or `benchmarks/data/`)."""
    archive_root = f"{MOLMOWEB_REPO.replace('/', '-')}_{MOLMOWEB_REVISION}"
    return DataSource(
        benchmark=benchmark,
        repo=MOLMOWEB_REPO,
        revision=MOLMOWEB_REVISION,
        marker=marker,
        subdirs=(archive_root, "data", "benchmarks/data"),
    )


def locate_version(
    sources: dict[str, DataSource], version: str, data_dir: Path | str | None, what: str
) -> tuple[DataSource, Path]:
    """One version's source and the folder holding its data (`--data-dir`, the cache, or downloaded).

    An unknown version is a usage error that lists the known ones.
    """
    if version not in sources:
        raise UnknownNameError(f"{what} version", version, list(sources))
    return sources[version], locate_data(sources[version], data_dir)
