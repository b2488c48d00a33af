"""Claw-Eval task data: `tasks/<id>/task.yaml` + fixtures, validated, and which tasks can run here.

The schema follows the upstream task files (data v1.1.0). Fields the loader does not use are kept
loosely typed; the ones scoring and the services need are validated, and a bad file is reported with
its path and the offending field.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any, Literal

import yaml
from inspect_ai.dataset import Sample
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from forge_eval._errors import ForgeError
from forge_eval.benchmarks._acquire import DataSource, locate_data
from forge_eval.benchmarks._selection import Selection, SkipRules, select
from forge_eval.benchmarks.claweval._services import CLAW_SERVICES, Ocr, family, service_for

SOURCE = DataSource(
    benchmark="claweval",
    repo="claw-eval/claw-eval",
    revision="9365e1a96ec084a5c8820cdf438e7fb4e1a83b90",
    marker="tasks",
    subdirs=("claw-eval_9365e1a", "claweval/claw-eval_9365e1a"),
)

#: The splits of the upstream dataset card (the `subset` option besides "all").
SPLITS = ("general", "multimodal", "multi_turn")

CheckType = Literal["llm_judge", "keywords_present", "tool_called", "min_length", "categories_present"]


class _Loose(BaseModel):
    model_config = ConfigDict(extra="allow")


class ServiceSpec(_Loose):
    name: str
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


class Check(_Loose):
    type: CheckType
    tool_name: str | None = None
    min_calls: int = 1
    keywords: list[str] = []
    categories: list[str] = []
    field: str = "final_text"
    min_length: int = 0
    description: str = ""
    rubric: str = ""

    @field_validator("keywords", "categories", mode="before")
    @classmethod
    def as_text(cls, value: Any) -> Any:
        # YAML reads unquoted keywords such as 9:00 as numbers (T029zh); they are meant as text.
        return [str(v) for v in value] if isinstance(value, list) else value


class ScoringComponent(_Loose):
    name: str
    weight: float = Field(ge=0)
    check: Check


class SafetyCheck(_Loose):
    type: str
    tool_name: str | None = None
    field: str | None = None
    value: Any = None
    description: str = ""


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
    judge_rubric: str = ""
    scoring_components: list[ScoringComponent] = []
    safety_checks: list[SafetyCheck] = []
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
    """The folder holding `tasks/`: `data_dir` (benchmark folder or upstream root), cache, or download."""
    return locate_data(SOURCE, data_dir)


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
    files = sorted((root / "tasks").glob("*/task.yaml"))
    if not files:
        raise ForgeError(f"no Claw-Eval tasks under {root / 'tasks'} (expected tasks/<id>/task.yaml)")
    return tuple(load_task(f) for f in files)


def task_dir(root: Path, task: ClawTask) -> Path:
    return root / "tasks" / task.task_id


def fixture_files(root: Path, task: ClawTask) -> dict[str, dict[str, Path]]:
    """Per service, its state field -> fixture file: the `*_FIXTURES` env paths (relative to the upstream
    root; a service with several names which field each fills), else the one JSON file in
    `fixtures/<service>/`. Services without a fixture start empty."""
    found: dict[str, dict[str, Path]] = {}
    for service in task.services:
        if family(service.name) == Ocr.name:
            found[service.name] = {f.name: f for f in Ocr.files(root, service.env)}
            continue
        fields = (
            getattr(CLAW_SERVICES.get(service.name), "fixture_fields", {})
            if service.name in CLAW_SERVICES
            else {}
        )
        declared = {
            fields.get(k, "records"): root / str(v)
            for k, v in service.env.items()
            if k.endswith("_FIXTURES") and v
        }
        if declared:
            found[service.name] = declared
            continue
        candidates = sorted((task_dir(root, task) / "fixtures" / service.name).glob("*.json"))
        if len(candidates) == 1:
            found[service.name] = {"records": candidates[0]}
    return found


def initial_states(root: Path, task: ClawTask) -> dict[str, dict[str, Any]]:
    """Per service the task calls (by the name of our service serving it), the state its world starts in."""
    fixtures = fixture_files(root, task)
    states = {}
    for service in task.services:
        files = fixtures.get(service.name, {})
        states[family(service.name)] = (
            Ocr.state(list(files.values()))
            if family(service.name) == Ocr.name
            else {field: load_fixture(path) for field, path in files.items()}
        )
    return states


def load_fixture(path: Path) -> list[dict[str, Any]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as e:
        raise ForgeError(f"cannot read Claw-Eval fixture {path}: {e}") from None
    if not isinstance(data, list) or not all(isinstance(r, dict) for r in data):
        raise ForgeError(f"Claw-Eval fixture {path} must be a JSON list of records")
    return data


#: Why a Claw-Eval task cannot run here, asked in order (the first reason is reported). `sandbox_files`
#: (media included) are what upstream copies into its Docker sandbox for the sandbox file tools; tasks
#: that need those tools are skipped, so for the others a missing image or PDF there changes nothing the
#: agent can see (the OCR tasks' services serve the pre-extracted text).
SKIP_RULES: SkipRules[ClawTask, Path] = SkipRules("Claw-Eval")


def _services(task: ClawTask) -> set[str]:
    return {s.name for s in task.services}


def _unimplemented(task: ClawTask) -> list[str]:
    return sorted({n for n in _services(task) if family(n) not in CLAW_SERVICES.names()})


@SKIP_RULES.rule("live_web")
def _live_web(task: ClawTask, root: Path) -> str | None:
    if any(n.startswith("web_real") for n in _services(task)):
        return "needs the live web and a SERP API key (web_real service)"
    return None


@SKIP_RULES.rule("documents")
def _documents(task: ClawTask, root: Path) -> str | None:
    if _unimplemented(task) == ["documents"]:
        return (
            "needs the PDF files its documents service parses (sandbox_files "
            f"{', '.join(task.sandbox_files)}), which are not in the data copy: media is published separately"
        )
    return None


@SKIP_RULES.rule("services")
def _mock_services(task: ClawTask, root: Path) -> str | None:
    if missing := _unimplemented(task):
        return f"needs mock service(s) we do not implement: {', '.join(missing)}"
    return None


@SKIP_RULES.rule("endpoints")
def _endpoints(task: ClawTask, root: Path) -> str | None:
    if unserved := sorted(e.tool_name for e in task.tool_endpoints if service_for(e.path) is None):
        return f"tool(s) without an implemented endpoint: {', '.join(unserved)}"
    return None


@SKIP_RULES.rule("sandbox_tools")
def _sandbox_tools(task: ClawTask, root: Path) -> str | None:
    no_endpoint = sorted({t.name for t in task.tools} - {e.tool_name for e in task.tool_endpoints})
    if no_endpoint:
        return f"needs the sandbox tools of the claw-eval Docker image: {', '.join(no_endpoint)}"
    if not task.services:
        return "needs the sandbox tools of the claw-eval Docker image (no mock services; media/file task)"
    return None


@SKIP_RULES.rule("grader_code")
def _grader_code(task: ClawTask, root: Path) -> str | None:
    if not task.scoring_components:
        return "no scoring_components: its grading exists only as upstream grader code"
    return None


@SKIP_RULES.rule("user_agent")
def _user_agent(task: ClawTask, root: Path) -> str | None:
    if task.user_agent is not None and task.user_agent.enabled:
        return "multi-turn task: needs the simulated user (not implemented)"
    return None


@SKIP_RULES.rule("fixtures")
def _fixtures(task: ClawTask, root: Path) -> str | None:
    for service, paths in fixture_files(root, task).items():
        for path in paths.values():
            if not path.is_file():
                return f"fixture of service {service} missing: {path}"
    return None


def skip_reason(root: Path, task: ClawTask) -> str | None:
    """Why this task cannot run here (None = it can), in words a report can show (`SKIP_RULES`)."""
    return SKIP_RULES.reason(task, root)


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
            "max_turns": spec.environment.max_turns,
            "timeout_seconds": spec.environment.timeout_seconds,
        },
    )


def select_tasks(
    data_dir: Path | str | None = None, subset: str = "all", task_ids: str | None = None
) -> Selection:
    """The tasks of a split (all, general, multimodal, multi_turn) or listed ids, runnable or skipped."""
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
        reason=lambda t: skip_reason(root, t),
        id_of=lambda t: t.task_id,
        hint="mock-service tasks of the general split run offline; see each task's reason",
    )
