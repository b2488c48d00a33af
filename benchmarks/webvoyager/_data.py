"""WebVoyager (Fara-595) task data: both published versions, with the original reference answers.

`fara` is Fara's `WebVoyager_data_08312025.jsonl` (595 tasks, ~48 impossible ones removed and ~50 dates
moved forward); `molmoweb` is MolmoWeb's `webvoyager.jsonl`, the same 595 ids with 82 questions
re-dated to 2026. `reference_answer.json` (original WebVoyager answers, per site) comes with Fara's copy.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from inspect_ai.dataset import Sample

from forge_eval._errors import ForgeError
from forge_eval.benchmarks._acquire import locate_data
from forge_eval.benchmarks._selection import Selection, select
from forge_eval.benchmarks.web import fara_source, live_sample, locate_version, molmoweb_source

SOURCES = {
    "fara": fara_source("webvoyager-fara", "WebVoyager_data_08312025.jsonl", "webvoyager"),
    "molmoweb": molmoweb_source("webvoyager-molmoweb", "webvoyager.jsonl"),
}
VERSIONS = tuple(SOURCES)
DEFAULT_VERSION = "fara"

_DATE = re.compile(
    r"\b(?:(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)[a-z]*\.? \d{1,2}(?:st|nd|rd|th)?,? \d{4}"
    r"|\d{1,2}(?:st|nd|rd|th)? (?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]* \d{4}"
    r"|\d{4}-\d{2}-\d{2}|(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]* \d{4})",
)


@dataclass(frozen=True)
class VoyagerTask:
    id: str
    site: str
    web: str
    question: str
    reference: str | None
    reference_type: str | None

    @property
    def dates(self) -> list[str]:
        """The dates the question names (the tasks whose dates the versions moved)."""
        return _DATE.findall(self.question)


def _read_jsonl(path: Path) -> list[dict]:
    rows = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as e:
            raise ForgeError(f"{path}:{n} is not JSON: {e.msg}") from None
        missing = {"id", "web_name", "web", "ques"} - set(row)
        if missing:
            raise ForgeError(f"{path}:{n} lacks {sorted(missing)}", hint="is this a WebVoyager jsonl file?")
        rows.append(row)
    return rows


def _references(folder: Path) -> dict[str, dict]:
    path = folder / "reference_answer.json"
    if not path.exists():
        return {}
    by_id = {}
    for site, block in json.loads(path.read_text(encoding="utf-8")).items():
        for answer in block.get("answers", []):
            by_id[f"{site}--{answer['id']}"] = answer
    return by_id


def _fara_references(data_dir: Path | str | None) -> dict[str, dict]:
    """Reference answers ship with Fara's copy; a MolmoWeb-only copy has none (answers stay empty)."""
    try:
        return _references(locate_data(SOURCES["fara"], data_dir))
    except ForgeError:
        return {}


def load_tasks(version: str = DEFAULT_VERSION, data_dir: Path | str | None = None) -> list[VoyagerTask]:
    """The tasks of one version, from `data_dir` (a copy of the upstream repo or its data folder)."""
    source, folder = locate_version(SOURCES, version, data_dir, "WebVoyager")
    rows = _read_jsonl(folder / source.marker)
    references = _references(folder) if version == "fara" else _fara_references(data_dir)
    return [
        VoyagerTask(
            id=r["id"],
            site=r["web_name"],
            web=r["web"],
            question=r["ques"],
            reference=(references.get(r["id"]) or {}).get("ans"),
            reference_type=(references.get(r["id"]) or {}).get("type"),
        )
        for r in rows
    ]


def prompt(task: VoyagerTask) -> str:
    """MolmoWeb's task prompt for WebVoyager (the episode starts at about:blank)."""
    return f"On {task.web}: {task.question}"


def to_sample(task: VoyagerTask, version: str) -> Sample:
    return live_sample(
        task.id,
        prompt(task),
        site_url=task.web,
        start_url="about:blank",
        category=task.site,
        version=version,
        target=task.reference or "",
        site=task.site,
        question=task.question,
        dates=task.dates,
        reference_type=task.reference_type,
    )


def select_tasks(
    data_dir: Path | str | None = None,
    version: str = DEFAULT_VERSION,
    task_ids: str | None = None,
    site: str | None = None,
) -> Selection:
    """The tasks of one version, of one site (e.g. "Allrecipes") or listed ids (all need the live web,
    which the benchmark's requirements check)."""
    tasks = load_tasks(version, data_dir)
    chosen = select(tasks, task_ids, site, what="WebVoyager", groups=lambda t: (t.site,), subset_kind="site")
    return Selection.of(chosen, sample=lambda t: to_sample(t, version))
