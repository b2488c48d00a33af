"""forgelab's task data: the YAML schema, loading it, and turning tasks into Inspect samples."""

from __future__ import annotations

import copy
from functools import cache
from pathlib import Path
from typing import Any, Literal

import yaml
from inspect_ai.dataset import Sample
from pydantic import BaseModel, Field, ValidationError, model_validator

from forge_eval._errors import ForgeError
from forge_eval.benchmarks._selection import Selection, select
from forge_eval.benchmarks.forgelab._checks import CHECKS
from forge_eval.benchmarks.services import SERVICES, TOOL_SPECS
from forge_eval.rundir import TOOL_SPECS_KEY, tool_specs_metadata

# The YAML files sit in the package folder itself, where setup.py's package_data ("*.yaml") finds them.
DATA_DIR = Path(__file__).parent
TASKS_FILE = "tasks.yaml"
WORLD_FILE = "world.yaml"

#: Tasks a 0.5B model has a fair chance on, one or more per category; short prompts, <= 5 calls.
QUICK_SUBSET: tuple[str, ...] = (
    "kb-expense-limit",
    "contacts-phone",
    "ticket-status",
    "send-retry",
    "priority-retry",
    "close-ticket-confirm",
    "vpn-maintenance-event",
    "refuse-mass-delete",
)

Category = Literal["lookup", "multi_step", "write_confirm", "error_recovery", "refusal"]
Difficulty = Literal["easy", "medium", "hard"]


class PlanStep(BaseModel):
    """One expected tool call. `args` must be matched by a call; `call` completes the reference call."""

    id: str
    tool: str
    args: dict[str, Any] = {}
    call: dict[str, Any] = {}
    description: str

    def metadata(self) -> dict[str, Any]:
        return {"id": self.id, "tool": self.tool, "args": self.args, "description": self.description}

    def reference_args(self) -> dict[str, Any]:
        return {**self.args, **self.call}


class FaultSpec(BaseModel):
    service: str
    endpoint: str
    status: int = 503
    times: int = 1
    message: str = "service temporarily unavailable, please retry"


class TaskSpec(BaseModel):
    """One forgelab task as written in tasks.yaml."""

    id: str
    category: Category
    difficulty: Difficulty
    services: list[str] = Field(min_length=1)
    prompt: str
    state: dict[str, dict[str, list[dict[str, Any]]]] = {}
    fault: FaultSpec | None = None
    plan: list[PlanStep]
    answer: str
    checks: list[dict[str, Any]] = Field(min_length=1)

    @model_validator(mode="after")
    def consistent(self) -> TaskSpec:
        known = set(SERVICES.names())
        for service in [*self.services, *self.state]:
            if service not in known:
                raise ValueError(f"unknown service '{service}' (known: {sorted(known)})")
        for step in self.plan:
            spec = TOOL_SPECS.get(step.tool)
            if spec is None or spec.service not in self.services:
                raise ValueError(f"plan step '{step.id}' uses tool '{step.tool}' outside {self.services}")
        if self.fault is not None and self.fault.service not in self.services:
            raise ValueError(f"fault on service '{self.fault.service}' outside {self.services}")
        for check in self.checks:
            CHECKS.validate(check)
            if "service" in check and check["service"] not in self.services:
                raise ValueError(f"check {check} reads service '{check['service']}' outside {self.services}")
        return self

    @property
    def required_tools(self) -> list[str]:
        return list(dict.fromkeys(step.tool for step in self.plan))

    def initial_state(self, world: dict[str, Any]) -> dict[str, dict[str, Any]]:
        """The starting state of each of the task's services: the shared world plus task records.

        Normalized through each service's state model (defaults filled in), so it compares
        equal to what the service's `GET /state` reports for an untouched world.
        """
        return {
            s: SERVICES.get(s).state_model.model_validate(_merge(world.get(s, {}), self.state.get(s, {})))
            .model_dump(mode="json")
            for s in self.services
        }

    def faults(self) -> dict[str, list[dict[str, Any]]]:
        """The fault plan per service, as the services' /reset expects it."""
        if self.fault is None:
            return {}
        return {self.fault.service: [self.fault.model_dump(exclude={"service"})]}


def _merge(base: dict[str, Any], extra: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """Add `extra` records to `base` collections; a record with an existing id/sku replaces it."""
    merged = copy.deepcopy(base)
    for collection, records in extra.items():
        current: list[dict[str, Any]] = merged.setdefault(collection, [])
        for record in records:
            key = _record_key(record)
            index = next((i for i, r in enumerate(current) if key and _record_key(r) == key), None)
            if index is None:
                current.append(copy.deepcopy(record))
            else:
                current[index] = copy.deepcopy(record)
    return merged


def _record_key(record: dict[str, Any]) -> str | None:
    return record.get("id") or record.get("sku")


def _read_yaml(path: Path) -> Any:
    try:
        return yaml.safe_load(path.read_text())
    except FileNotFoundError:
        raise ForgeError(
            f"forgelab data file not found: {path}", hint="pass a data dir holding tasks.yaml and world.yaml"
        ) from None
    except yaml.YAMLError as e:
        raise ForgeError(f"forgelab data file {path} is not valid YAML: {e}") from None


@cache
def load_world(data_dir: Path = DATA_DIR) -> dict[str, Any]:
    """The shared starting world (service name -> state)."""
    return _read_yaml(data_dir / WORLD_FILE)


@cache
def load_tasks(data_dir: Path = DATA_DIR) -> tuple[TaskSpec, ...]:
    """Every task in `data_dir`/tasks.yaml, validated (clear errors name the task and field)."""
    raw = _read_yaml(data_dir / TASKS_FILE)
    if not isinstance(raw, list):
        raise ForgeError(f"{data_dir / TASKS_FILE} must hold a list of tasks")
    tasks = []
    for index, item in enumerate(raw):
        try:
            tasks.append(TaskSpec.model_validate(item))
        except ValidationError as e:
            name = item.get("id", f"#{index}") if isinstance(item, dict) else f"#{index}"
            raise ForgeError(f"invalid forgelab task {name} in {data_dir / TASKS_FILE}:\n{e}") from None
    ids = [t.id for t in tasks]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise ForgeError(f"duplicate forgelab task ids: {duplicates}")
    return tuple(tasks)


def to_sample(task: TaskSpec, world: dict[str, Any]) -> Sample:
    """The Inspect sample; metadata holds the contract keys plus what setup and scorer need."""
    return Sample(
        id=task.id,
        input=task.prompt,
        target=task.answer,
        metadata={
            "services": list(task.services),
            "required_tools": task.required_tools,
            "plan": [step.metadata() for step in task.plan],
            "difficulty": task.difficulty,
            "category": task.category,
            "fault": task.fault.model_dump() if task.fault else None,
            "checks": task.checks,
            "initial_state": task.initial_state(world),
            # how the sample's tools touch its services, for behavioral analysis
            TOOL_SPECS_KEY: tool_specs_metadata(s for s in TOOL_SPECS.values() if s.service in task.services),
        },
    )


def select_tasks(
    data_dir: Path | str | None = None, subset: str = "all", task_ids: str | None = None
) -> Selection:
    """The tasks of a subset ("all", "quick", a category or a difficulty) or of listed ids (every
    forgelab task runs offline, so none is skipped)."""
    folder = Path(data_dir) if data_dir else DATA_DIR
    world = load_world(folder)
    chosen = select(
        load_tasks(folder),
        task_ids,
        subset,
        what="forgelab",
        subsets={"quick": QUICK_SUBSET},
        groups=lambda t: (t.category, t.difficulty),
    )
    return Selection.of(chosen, sample=lambda t: to_sample(t, world))
