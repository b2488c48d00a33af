"""QwenClawBench task data: Markdown files with YAML front matter, their sections and `grade()` code.

Parsing follows the upstream loader (`scripts/lib_tasks.py`): the front matter is matched with a regex
(a naive split on `---` breaks tasks whose text contains `---`), the tracing-only `source_query` /
`source_line_number` fields are dropped before YAML parsing, the body is cut into `## ` sections, and
the automated checks are the first ```python block of "Automated Checks".
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import yaml
from inspect_ai.dataset import Sample
from inspect_ai.solver import TaskState

from forge_eval._errors import ForgeError
from forge_eval.benchmarks._acquire import DataSource, locate_data, task_files
from forge_eval.benchmarks._selection import Selection, SkipRules, select

DATASET = "qwenclawbench-v1.1-100"
SOURCE = DataSource(
    benchmark="qwenclawbench",
    repo="SKYLENAGE-AI/QwenClawBench",
    revision="e4eefcf60acf4722aea04a5c37e750dc764b7a07",
    marker="tasks",
    subdirs=(f"data/{DATASET}", f"QwenClawBench_e4eefcf/{DATASET}", DATASET),
    manual="the Hugging Face copy skylenage-ai/QwenClawBench is gated (accept its terms first)",
    task_of=r"data/[^/]+/(?:tasks|assets)/(?P<task>task_\d+_[^/]*?)(?:\.md$|/)",
)

FRONT_MATTER = re.compile(r"^---\s*\n(.*?)\n---\s*\n(.*)$", re.DOTALL)
_TRACING = (
    re.compile(r"^source_query:\s*.*?(?=\n\w+:\s|\n---|\Z)", re.MULTILINE | re.DOTALL),
    re.compile(r"^source_line_number:.*$", re.MULTILINE),
)
_SECTION = re.compile(r"^##\s+(.+)$")
_CHECKBOX = re.compile(r"^-\s+\[[ x]\]\s+(.+)$")
_PYTHON_BLOCK = re.compile(r"```python\s*\n(.*?)\n\s*```", re.DOTALL)
GRADING_TYPES = ("automated", "llm_judge", "hybrid")


@dataclass(frozen=True)
class WorkspaceFile:
    """A file put in the agent's workspace: copied from `assets/<task>/<source>` or written inline."""

    dest: str
    source: str | None = None
    content: str | None = None


@dataclass(frozen=True)
class QwenTask:
    """One QwenClawBench task."""

    task_id: str
    name: str
    category: str
    grading_type: str
    timeout_seconds: int
    prompt: str
    expected_behavior: str
    grading_criteria: tuple[str, ...]
    automated_checks: str | None
    llm_judge_rubric: str | None
    grading_weights: dict[str, Any] | None
    workspace_files: tuple[WorkspaceFile, ...]
    external_dependency: str = "none"
    path: Path = field(default=Path("."), compare=False)

    @property
    def grading_code(self) -> str:
        """The `grade()` source, or "" when the task has none (its automated score is then 0)."""
        match = _PYTHON_BLOCK.search(self.automated_checks or "")
        return match.group(1) if match else ""


def data_root(data_dir: Path | str | None = None) -> Path:
    """The dataset folder holding `tasks/` and `assets/` (benchmark folder, upstream root, or cache)."""
    return locate_data(SOURCE, data_dir)


def sections(body: str) -> dict[str, str]:
    """`## Heading` -> text up to the next `## ` line (as upstream: headings inside code count too)."""
    found: dict[str, list[str]] = {}
    current: str | None = None
    for line in body.split("\n"):
        match = _SECTION.match(line)
        if match:
            current = match.group(1)
            found[current] = []
        elif current is not None:
            found[current].append(line)
    return {k: "\n".join(v).strip() for k, v in found.items()}


def _bad(path: Path, field_name: str, problem: str) -> ForgeError:
    return ForgeError(
        f"invalid QwenClawBench task {path}: field '{field_name}': {problem}",
        hint="fix the file or use an unmodified copy of the upstream data",
    )


def _workspace_file(path: Path, index: int, raw: Any) -> WorkspaceFile:
    if not isinstance(raw, dict):
        raise _bad(path, f"workspace_files.{index}", "must be a mapping")
    if "source" in raw:
        return WorkspaceFile(dest=str(raw.get("dest") or raw["source"]), source=str(raw["source"]))
    if "path" in raw:
        return WorkspaceFile(dest=str(raw["path"]), content=str(raw.get("content") or ""))
    raise _bad(path, f"workspace_files.{index}", "needs 'source' (+ 'dest') or 'path' (+ 'content')")


def load_task(path: Path) -> QwenTask:
    """Parse one task file; errors name the file and the field."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise ForgeError(f"cannot read QwenClawBench task {path}: {e}") from None
    match = FRONT_MATTER.match(text)
    if not match:
        raise _bad(path, "front matter", "no YAML front matter (a '---' block at the top) found")
    front = match.group(1)
    for pattern in _TRACING:
        front = pattern.sub("", front)
    try:
        meta = yaml.safe_load(front)
    except yaml.YAMLError as e:
        raise _bad(path, "front matter", f"not valid YAML: {e}") from None
    if not isinstance(meta, dict):
        raise _bad(path, "front matter", "must be a YAML mapping")
    for required in ("id", "category"):
        if not meta.get(required):
            raise _bad(path, required, "missing")
    grading_type = str(meta.get("grading_type", "automated"))
    if grading_type not in GRADING_TYPES:
        raise _bad(path, "grading_type", f"'{grading_type}' is not one of {', '.join(GRADING_TYPES)}")
    weights = meta.get("grading_weights")
    if weights is not None and not isinstance(weights, dict):
        raise _bad(path, "grading_weights", "must be a mapping like {automated: 0.4, llm_judge: 0.6}")
    body = sections(match.group(2))
    if not body.get("Prompt"):
        raise _bad(path, "## Prompt", "the task has no prompt section")
    criteria = tuple(
        m.group(1)
        for line in body.get("Grading Criteria", "").split("\n")
        if (m := _CHECKBOX.match(line.strip()))
    )
    files = tuple(_workspace_file(path, i, raw) for i, raw in enumerate(meta.get("workspace_files") or []))
    return QwenTask(
        task_id=str(meta["id"]),
        name=str(meta.get("name", "")),
        category=str(meta["category"]),
        grading_type=grading_type,
        timeout_seconds=int(meta.get("timeout_seconds", 120)),
        prompt=body["Prompt"],
        expected_behavior=body.get("Expected Behavior", ""),
        grading_criteria=criteria,
        automated_checks=body.get("Automated Checks"),
        llm_judge_rubric=body.get("LLM Judge Rubric"),
        grading_weights=weights,
        workspace_files=files,
        external_dependency=str(meta.get("external_dependency", "none")).lower(),
        path=path,
    )


@cache
def load_tasks(root: Path) -> tuple[QwenTask, ...]:
    return tuple(load_task(f) for f in task_files(root, "task_*.md", "QwenClawBench"))


def asset_path(root: Path, task: QwenTask, item: WorkspaceFile) -> Path | None:
    return root / "assets" / task.task_id / item.source if item.source else None


def stage_workspace(root: Path, task: QwenTask, workspace: Path) -> None:
    """Copy/write the task's workspace files into `workspace` (as the upstream runner does)."""
    for item in task.workspace_files:
        target = workspace / item.dest
        target.parent.mkdir(parents=True, exist_ok=True)
        source = asset_path(root, task, item)
        if source is not None:
            target.write_bytes(source.read_bytes())
        else:
            target.write_text(item.content or "", encoding="utf-8")


#: Why a QwenClawBench task cannot run here, asked in order (the first reason is reported).
SKIP_RULES: SkipRules[QwenTask, Path] = SkipRules("QwenClawBench")


#: `external_dependency` values of tasks that need nothing beyond their workspace. Upstream's scripts never
#: read the field and run every task in a container with the network; forge-eval's sandbox reaches only
#: the model's proxy, so the tasks that declare a network service (web, feishu) cannot run here.
OFFLINE_DEPENDENCIES = ("none", "false", "requires_mock")


@SKIP_RULES.rule("external_dependency")
def _external_dependency(task: QwenTask, root: Path) -> str | None:
    if task.external_dependency not in OFFLINE_DEPENDENCIES:
        return (
            "needs the network (upstream's container has it; forge-eval's sandbox reaches only the model's "
            f"proxy) for its external dependency: {task.external_dependency}"
        )
    return None


@SKIP_RULES.rule("workspace_files")
def _workspace_files(task: QwenTask, root: Path) -> str | None:
    missing = [i.source for i in task.workspace_files if (p := asset_path(root, task, i)) and not p.is_file()]
    if missing:
        return (
            f"{len(missing)} workspace file(s) are not in this data copy (use an unmodified checkout of "
            f"the upstream repository): {', '.join(str(m) for m in missing[:3])}"
        )
    return None


def skip_reason(root: Path, task: QwenTask) -> str | None:
    """Why the task cannot run here (None = it can; `SKIP_RULES`)."""
    return SKIP_RULES.reason(task, root)


def to_sample(root: Path, spec: QwenTask) -> Sample:
    return Sample(
        id=spec.task_id,
        input=spec.prompt,
        metadata={
            "data_root": str(root),
            "category": spec.category,
            "grading_type": spec.grading_type,
            "timeout_seconds": spec.timeout_seconds,
            "grading_weights": spec.grading_weights,
        },
    )


def sample_task(state: TaskState) -> tuple[Path, QwenTask]:
    """The data folder and the task of a sample."""
    root = Path(state.metadata["data_root"])
    return root, next(t for t in load_tasks(root) if t.task_id == state.sample_id)


def select_tasks(data_dir: Path | str | None = None, task_ids: str | None = None) -> Selection:
    """The listed tasks (comma-separated ids; all when None), runnable or skipped."""
    root = data_root(data_dir)
    chosen = select(load_tasks(root), task_ids, what="QwenClawBench", id_of=lambda t: t.task_id)
    return Selection.of(
        chosen,
        sample=lambda t: to_sample(root, t),
        reason=lambda t: skip_reason(root, t),
        id_of=lambda t: t.task_id,
        hint="see the skipped reasons (external dependencies, files missing from this data copy)",
    )
