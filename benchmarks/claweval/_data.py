"""Claw-Eval's tasks as read from the pinned upstream tree (`tasks/<id>/task.yaml`), and which run here.

forge-eval reads a task.yaml only to choose and describe samples (id, split, services and their ports,
limits) and to say why a task is skipped; the trial itself is run and graded by upstream's code
(`_trial.py`). A bad file is reported with its path and the offending field.
"""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path
from typing import Any, Literal

import yaml
from inspect_ai.dataset import Sample
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from forge_eval._errors import ForgeError, UsageError
from forge_eval.benchmarks._acquire import task_files
from forge_eval.benchmarks._selection import Selection, SkipRules, select
from forge_eval.benchmarks.claweval._upstream import SERP_KEY, upstream_tree

#: The splits of the upstream dataset card (the `subset` option besides "all").
SPLITS = ("general", "multimodal", "multi_turn")
#: Where upstream's sandbox tools run: upstream's server in our bubblewrap sandbox, or not at all (as
#: `claw-eval batch` without `--sandbox`).
SANDBOXES = ("bwrap", "none")

class _Loose(BaseModel):
    model_config = ConfigDict(extra="allow")


class ServiceSpec(_Loose):
    name: str
    port: int = Field(gt=0)
    env: dict[str, Any] = {}


class Prompt(_Loose):
    text: str = Field(min_length=1)
    language: str = "en"


class ToolSpec(_Loose):
    name: str
    description: str = ""
    input_schema: dict[str, Any] = {"type": "object", "properties": {}}


class ToolEndpoint(_Loose):
    tool_name: str
    url: str
    method: Literal["POST", "GET"] = "POST"

    @property
    def path(self) -> str:
        """The URL path (`/gmail/messages`); the host and port are the upstream's, not ours."""
        return "/" + self.url.split("://", 1)[-1].split("/", 1)[-1]


class Environment(_Loose):
    timeout_seconds: int = Field(default=600, gt=0)
    max_turns: int = Field(default=30, gt=0)


class UserAgent(_Loose):
    enabled: bool = False
    max_rounds: int = 3


class ClawTask(_Loose):
    """One Claw-Eval task as written in its task.yaml."""

    task_id: str
    task_name: str = ""
    category: str
    difficulty: str = ""
    tags: list[str] = []
    services: list[ServiceSpec] = []
    prompt: Prompt
    tools: list[ToolSpec] = []
    tool_endpoints: list[ToolEndpoint] = []
    sandbox_files: list[str] = []
    environment: Environment = Environment()
    user_agent: UserAgent | None = None
    reference_solution: str = ""

    @property
    def split(self) -> str:
        """general (T*), multimodal (M*) or multi_turn (C*), as on the upstream dataset card."""
        return {"T": "general", "M": "multimodal", "C": "multi_turn"}.get(self.task_id[:1], "general")

    @property
    def language(self) -> str:
        return self.prompt.language


def data_root(data_dir: Path | str | None = None) -> Path:
    """The pinned upstream tree: `data_dir` (the tree or a folder holding it), the cache, or a download."""
    return upstream_tree(data_dir)


def _field_path(loc: tuple[Any, ...]) -> str:
    return ".".join(str(p) for p in loc) or "(top level)"


def load_task(path: Path) -> ClawTask:
    """Parse and validate one task.yaml; errors name the file and the field."""
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as e:
        raise ForgeError(f"cannot read Claw-Eval task {path}: {e}") from None
    if not isinstance(raw, dict):
        raise ForgeError(f"Claw-Eval task {path} is not a YAML mapping")
    try:
        task = ClawTask.model_validate(raw)
    except ValidationError as e:
        first = e.errors()[0]
        raise ForgeError(
            f"invalid Claw-Eval task {path}: field '{_field_path(first['loc'])}': {first['msg']}"
            + (f" (and {e.error_count() - 1} more problems)" if e.error_count() > 1 else ""),
            hint="fix the file or use an unmodified copy of the upstream data",
        ) from None
    tools = {t.name for t in task.tools}
    for endpoint in task.tool_endpoints:
        if endpoint.tool_name not in tools:
            raise ForgeError(
                f"invalid Claw-Eval task {path}: tool_endpoints names tool '{endpoint.tool_name}' "
                f"that is not in tools ({', '.join(sorted(tools))})"
            )
    return task


@cache
def load_tasks(root: Path) -> tuple[ClawTask, ...]:
    """Every task under `root/tasks`, in id order."""
    return tuple(load_task(f) for f in task_files(root, "*/task.yaml", "Claw-Eval"))


#: Why a Claw-Eval task cannot run here, asked in order (the first reason is reported).
SKIP_RULES: SkipRules[ClawTask, Path] = SkipRules("Claw-Eval")


@cache
def missing_files(root: Path) -> frozenset[str]:
    """The files of the upstream commit that this copy of the tree lacks (its `MISSING.txt`, if any)."""
    listing = root / "MISSING.txt"
    if not listing.is_file():
        return frozenset()
    lines = listing.read_text(encoding="utf-8").splitlines()
    return frozenset(line.strip() for line in lines if line.startswith("tasks/"))


@SKIP_RULES.rule("live_web")
def _live_web(task: ClawTask, root: Path) -> str | None:
    live = sorted({s.name for s in task.services if s.name.startswith("web_real")})
    if live and not os.environ.get(SERP_KEY):
        return (
            f"needs the live web and a SERP API key ({', '.join(live)} service): "
            f"export {SERP_KEY} as upstream's README says, with the network open, to run it"
        )
    return None


@SKIP_RULES.rule("missing_files")
def _missing_files(task: ClawTask, root: Path) -> str | None:
    prefix = f"tasks/{task.task_id}/"
    if lacking := sorted(f for f in missing_files(root) if f.startswith(prefix)):
        return f"files of the task are not in this copy of the tree (MISSING.txt): {', '.join(lacking)}"
    return None


def _images_rule(task: ClawTask) -> str | None:
    if task.split == "multimodal":
        return (
            "multimodal: its agent and judge must see images, which the run's models are not declared to "
            "(-T images=true with image-capable endpoints runs it)"
        )
    return None


def _sandbox_rule(task: ClawTask) -> str | None:
    no_endpoint = sorted({t.name for t in task.tools} - {e.tool_name for e in task.tool_endpoints})
    if no_endpoint or not task.services:
        needs = ", ".join(no_endpoint) or "its files (no mock services)"
        return f"needs upstream's sandbox tools, which -T sandbox=none leaves out: {needs}"
    return None



def skip_reason(root: Path, task: ClawTask, sandbox: str = "bwrap", images: bool = False) -> str | None:
    """Why this task cannot run here (None = it can), in words a report can show: `SKIP_RULES`, then the
    multimodal tasks unless the run's models see images, then (without a sandbox) the tasks that need
    the sandbox's tools."""
    return (
        SKIP_RULES.reason(task, root)
        or (None if images else _images_rule(task))
        or (_sandbox_rule(task) if sandbox == "none" else None)
    )


def to_sample(root: Path, spec: ClawTask) -> Sample:
    return Sample(
        id=spec.task_id,
        input=spec.prompt.text,
        metadata={
            "data_root": str(root),
            "category": spec.category,
            "difficulty": spec.difficulty,
            "split": spec.split,
            "language": spec.language,
            "services": [s.name for s in spec.services],
            "ports": [s.port for s in spec.services],
            "max_turns": spec.environment.max_turns,
            "timeout_seconds": spec.environment.timeout_seconds,
        },
    )


def select_tasks(
    data_dir: Path | str | None = None,
    subset: str = "all",
    task_ids: str | None = None,
    sandbox: str = "bwrap",
    images: bool = False,
) -> Selection:
    """The tasks of a split (all, general, multimodal, multi_turn) or listed ids, runnable or skipped."""
    if sandbox not in SANDBOXES:
        raise UsageError(f"unknown Claw-Eval sandbox {sandbox!r}; valid: {', '.join(SANDBOXES)}")
    root = data_root(data_dir)
    chosen = select(
        load_tasks(root),
        task_ids,
        subset,
        what="Claw-Eval",
        id_of=lambda t: t.task_id,
        subsets={split: (lambda t, split=split: t.split == split) for split in SPLITS},
    )
    return Selection.of(
        chosen,
        sample=lambda t: to_sample(root, t),
        reason=lambda t: skip_reason(root, t, sandbox, images),
        id_of=lambda t: t.task_id,
        hint="the mock-service tasks run offline; see each task's reason",
    )
