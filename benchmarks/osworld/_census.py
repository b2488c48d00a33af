"""The census of OSWorld's tasks: per provider, offline and online, how many run and why the others not.

It asks the rules a run selects with (`split_runnable`, the same rules `forge-eval run osworld --dry-run`
shows), on this machine's programs and packages. Offline counts no task file as downloaded, whatever an
earlier run left in the cache; online, every task file can be downloaded and live sites reached.
`scripts/osworld_census.py` writes the table into the OSWorld README (the docs page) and a test keeps it
in sync.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from forge_eval.benchmarks._acquire import cache_root
from forge_eval.benchmarks._selection import reason_counts
from forge_eval.benchmarks.osworld._data import load_tasks
from forge_eval.benchmarks.osworld._providers import PROVIDERS
from forge_eval.benchmarks.osworld._support import SupportContext, split_runnable

#: The network settings of the census: label -> whether task files can be downloaded.
NETWORKS = {"offline (no task files cached)": False, "online (task files and live sites reachable)": True}


@dataclass(frozen=True)
class CensusRow:
    """The providers that run the same tasks under one network setting, and the skipped ones' reasons.

    Attributes:
        providers: Provider names (`-T provider=`), in registry order.
        network: A label of `NETWORKS`.
        runnable: Tasks these providers run.
        total: Tasks of the benchmark.
        reasons: Skipped tasks counted by reason (`reason_counts`), most frequent first.
    """

    providers: tuple[str, ...]
    network: str
    runnable: int
    total: int
    reasons: tuple[tuple[str, int], ...]


def census(root: Path) -> list[CensusRow]:
    """Every provider under both network settings; providers with the same outcome share a row."""
    tasks = load_tasks(root)
    rows: list[CensusRow] = []
    with _no_task_files():
        for network, may_download in NETWORKS.items():
            outcomes: dict[tuple[tuple[str, ...], tuple[tuple[str, str], ...]], list[str]] = {}
            for provider in PROVIDERS.names():
                context = SupportContext(provider=provider, may_download=may_download, tree=root)
                run, skipped = split_runnable(tasks, context)
                key = (tuple(t.id for t in run), tuple(sorted(skipped.items())))
                outcomes.setdefault(key, []).append(provider)
            for (run_ids, skipped_items), providers in outcomes.items():
                reasons = tuple(reason_counts(dict(skipped_items)))
                rows.append(CensusRow(tuple(providers), network, len(run_ids), len(tasks), reasons))
    return rows


def census_table(rows: list[CensusRow]) -> str:
    """The census as a Markdown table."""
    lines = ["| providers | network | runnable | skipped, by reason |", "|---|---|---|---|"]
    for row in rows:
        reasons = "; ".join(f"{n} {reason}" for reason, n in row.reasons) or "none"
        cells = (", ".join(row.providers), row.network, f"{row.runnable} of {row.total}", reasons)
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(lines) + "\n"


@contextmanager
def _no_task_files() -> Iterator[None]:
    """The user cache as this machine has it, less the benchmarks' downloaded files: `FORGE_CACHE_DIR`
    points at a folder linking every entry of the real one but `benchmarks/` (the desktop's packages,
    which a rule reads, stay), so the offline rows do not depend on what an earlier run downloaded."""
    real = cache_root()
    previous = os.environ.get("FORGE_CACHE_DIR")
    with tempfile.TemporaryDirectory(prefix="forge-census-") as folder:
        for entry in real.parent.iterdir() if real.parent.is_dir() else []:
            if entry.name != real.name:
                (Path(folder) / entry.name).symlink_to(entry)
        os.environ["FORGE_CACHE_DIR"] = folder
        try:
            yield
        finally:
            if previous is None:
                os.environ.pop("FORGE_CACHE_DIR", None)
            else:
                os.environ["FORGE_CACHE_DIR"] = previous
