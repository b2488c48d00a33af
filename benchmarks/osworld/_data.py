"""OSWorld-Verified task data: the 369 Ubuntu task JSONs and the task files their setups download.

Task JSONs come from the pinned OSWorld tree: `--data-dir` (a checkout of the OSWorld repository), else
the user cache, else the pinned archive (`forge_eval.benchmarks._acquire`). The same tree gives the
evaluators (`_evaluators`) and the agent's prompts (`_agent`). Task files
(documents, images, gold files on Hugging Face) are cached once under `<cache>/osworld-files/` with
OSWorld's own names (`<uuid5(url)>_<file name>`), so a cache filled by OSWorld's runner can be reused.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import httpx

from forge_eval._errors import UnknownNameError, UsageError
from forge_eval.benchmarks._acquire import DataSource, cache_root, locate_data
from forge_eval.benchmarks._selection import select

# One OSWorld tree gives the task JSONs, the evaluators (`desktop_env/`) and the agent's prompts
# (`mm_agents/`). Pinned to the public snapshot of xlang-ai/OSWorld whose `evaluation_examples/` are the
# Verified task data (ljxpython/OSWorldUse's first commit, a copy of upstream after Verified); which
# xlang-ai/OSWorld commit it copies is not recorded upstream. Pass --data-dir for another copy.
SOURCE = DataSource(
    benchmark="osworld",
    repo="ljxpython/OSWorldUse",
    revision="f6cee71",
    marker="evaluation_examples/test_all.json",
    subdirs=("OSWorld_snapshot_ljxpython-b5007a9", "osworld_verified/OSWorld_snapshot_ljxpython-b5007a9"),
    task_of=r"evaluation_examples/examples/[^/]+/(?P<task>[^/]+)\.json$",
)
#: Task lists shipped with the data: `subset` option values.
SUBSETS = {
    "all": "test_all.json",
    "nogdrive": "test_nogdrive.json",
    "small": "test_small.json",
    "infeasible": "test_infeasible.json",
}
_ONLINE_PROBE = "https://huggingface.co"


@dataclass(frozen=True)
class OSWorldTask:
    """One task JSON and where it came from."""

    domain: str
    raw: dict[str, Any] = field(hash=False, compare=False)

    @property
    def id(self) -> str:
        return str(self.raw["id"])

    @property
    def instruction(self) -> str:
        return str(self.raw["instruction"])

    @property
    def evaluator(self) -> dict[str, Any]:
        return dict(self.raw.get("evaluator", {}))

    @property
    def config(self) -> list[dict[str, Any]]:
        return list(self.raw.get("config", []))

    @property
    def infeasible(self) -> bool:
        return self.evaluator.get("func") == "infeasible"

    def downloads(self) -> list[tuple[str, Path]]:
        """(url, cache path) of every file the setup downloads or a checker fetches (`cloud_file`)."""
        found: list[tuple[str, Path]] = []
        for step in self.config + list(self.evaluator.get("postconfig", [])):
            if step.get("type") == "download":
                found += [
                    (f["url"], files_dir() / cached_name(f["url"], os.path.basename(f["path"])))
                    for f in step["parameters"]["files"]
                ]
        for key in ("expected", "result"):
            for getter in _as_list(self.evaluator.get(key)):
                if isinstance(getter, dict) and getter.get("type") == "cloud_file":
                    urls, dests = _as_list(getter.get("path")), _as_list(getter.get("dest"))
                    found += [(u, task_cache_dir(self.id) / d) for u, d in zip(urls, dests, strict=False)]
        return found


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    return value if isinstance(value, list) else [value]


def data_root(data_dir: Path | str | None = None) -> Path:
    """The OSWorld tree: the folder that holds `evaluation_examples/` (and `desktop_env/`, `mm_agents/`)."""
    return locate_data(SOURCE, data_dir)


@cache
def _load_all(root: Path) -> tuple[OSWorldTask, ...]:
    examples = root / "evaluation_examples"
    index = json.loads((examples / SUBSETS["all"]).read_text())
    tasks = []
    for domain, ids in index.items():
        for task_id in ids:
            path = examples / "examples" / domain / f"{task_id}.json"
            try:
                tasks.append(OSWorldTask(domain, json.loads(path.read_text())))
            except (OSError, json.JSONDecodeError) as exc:
                raise UsageError(
                    f"OSWorld task file {path} cannot be read: {exc}",
                    hint="re-download the data or fix --data-dir",
                ) from None
    return tuple(tasks)


def load_tasks(
    root: Path, subset: str = "all", task_ids: str | None = None, domain: str | None = None
) -> list[OSWorldTask]:
    """The tasks of a subset (all, nogdrive, small, infeasible: OSWorld's task lists), of a domain, or
    listed ids (which override both), chosen as every benchmark chooses (`select`)."""
    tasks = list(_load_all(root))
    subsets = {name: _listed(root, index) for name, index in SUBSETS.items() if name != "all"}
    chosen = select(tasks, task_ids, subset, what="OSWorld", subsets=subsets, subset_kind="subset")
    if task_ids or domain is None:
        return chosen
    domains = sorted({t.domain for t in tasks})
    if domain not in domains:
        raise UnknownNameError("OSWorld domain", domain, domains)
    return [t for t in chosen if t.domain == domain]


def _listed(root: Path, index: str) -> Callable[[OSWorldTask], bool]:
    """Membership in one of OSWorld's task lists (`evaluation_examples/test_*.json`: domain -> ids)."""
    listing = json.loads((root / "evaluation_examples" / index).read_text())
    ids = {i for domain_ids in listing.values() for i in domain_ids}
    return lambda task: task.id in ids


def files_dir() -> Path:
    """Where setup downloads are cached (`FORGE_CACHE_DIR`/benchmarks/osworld-files)."""
    return cache_root() / "osworld-files"


def task_cache_dir(task_id: str) -> Path:
    """A task's checker folder (OSWorld's `cache/<task id>`): expected files stay for the next run."""
    return cache_root() / "osworld-tasks" / task_id


def cached_name(url: str, name: str) -> str:
    """OSWorld's cache file name for `url` saved as `name`."""
    return f"{uuid.uuid5(uuid.NAMESPACE_URL, url)}_{name}"


def missing_files(task: OSWorldTask) -> list[str]:
    """URLs of the task's files that are not in the cache."""
    return [url for url, path in task.downloads() if not path.exists()]


@cache
def online() -> bool:
    """Whether the task-file host answers (checked once per process, 5 s)."""
    try:
        httpx.head(_ONLINE_PROBE, timeout=5.0)
    except httpx.HTTPError:
        return False
    return True
