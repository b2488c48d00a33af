"""Online-Mind2Web task data: the June-2025 set (Fara's copy) and the Nov-2025 revision (MolmoWeb's copy).

The 2025-11-03 revision replaced 36 invalid or CAPTCHA-blocked tasks; in MolmoWeb's copy the replaced
tasks carry the id suffix `_110325`. Records: task_id, confirmed_task, website, reference_length, level.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from inspect_ai.dataset import Sample

from forge_eval._errors import ForgeError
from forge_eval.benchmarks._selection import Selection, select
from forge_eval.benchmarks.web import fara_source, live_sample, locate_version, molmoweb_source

SOURCES = {
    "2025-06": fara_source("online-mind2web-2025-06", "Online_Mind2Web_06042025.json", "om2w"),
    "2025-11": molmoweb_source("online-mind2web-2025-11", "online_mind2web.json"),
}
VERSIONS = tuple(SOURCES)
DEFAULT_VERSION = "2025-11"
#: The suffix MolmoWeb's copy gives the tasks the 2025-11-03 update replaced.
REVISED_SUFFIX = "_110325"
LEVELS = ("easy", "medium", "hard")


@dataclass(frozen=True)
class Mind2WebTask:
    id: str
    task: str
    website: str
    reference_length: int
    level: str

    @property
    def revised(self) -> bool:
        """Replaced by the 2025-11-03 update."""
        return self.id.endswith(REVISED_SUFFIX)


def load_tasks(version: str = DEFAULT_VERSION, data_dir: Path | str | None = None) -> list[Mind2WebTask]:
    """The tasks of one version, from `data_dir` (a copy of the upstream repo or its data folder)."""
    source, folder = locate_version(SOURCES, version, data_dir, "Online-Mind2Web")
    path = folder / source.marker
    try:
        rows = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise ForgeError(f"{path} is not JSON: {e.msg} (line {e.lineno})") from None
    tasks = []
    for n, r in enumerate(rows):
        missing = {"task_id", "confirmed_task", "website", "level"} - set(r)
        if missing:
            raise ForgeError(f"{path}: record {n} lacks {sorted(missing)}")
        if r["level"] not in LEVELS:
            raise ForgeError(f"{path}: record {n} has level {r['level']!r}; expected one of {LEVELS}")
        tasks.append(
            Mind2WebTask(
                r["task_id"], r["confirmed_task"], r["website"], int(r.get("reference_length", 0)), r["level"]
            )
        )
    return tasks


def to_sample(task: Mind2WebTask, version: str) -> Sample:
    """MolmoWeb's Online-Mind2Web prompt is the task itself; the episode starts on the website."""
    return live_sample(
        task.id,
        task.task,
        site_url=task.website,
        start_url=task.website,
        category=task.level,
        version=version,
        difficulty=task.level,
        reference_length=task.reference_length,
        revised=task.revised,
    )


def select_tasks(
    data_dir: Path | str | None = None,
    version: str = DEFAULT_VERSION,
    task_ids: str | None = None,
    level: str | None = None,
) -> Selection:
    """The tasks of one version, of one level (easy, medium, hard) or listed ids (all need the live web,
    which the benchmark's requirements check)."""
    tasks = load_tasks(version, data_dir)
    chosen = select(
        tasks, task_ids, level, what="Online-Mind2Web", groups=lambda t: (t.level,), subset_kind="level"
    )
    return Selection.of(chosen, sample=lambda t: to_sample(t, version))
